// GitHub Actions workflow commands: one annotation per check that needs attention, at the span's
// call site, at most ten per level (GitHub shows no more per step) plus one notice counting the rest.
import Perf

extension BudgetVerdict {
    /// The annotations GitHub shows per level and step; more are dropped silently, so we say so.
    public static let annotationCapPerLevel = 10

    /// Workflow commands for stdout, e.g.
    /// `::error file=Sources/API/Get.swift,line=88,title=api.get p95::✘ api.get p95 (error): …`.
    ///
    /// - Parameter resolveFile: Maps a call site's `#fileID`, `Module/File.swift`, to a path
    ///   relative to the repository root (e.g. `Sources/module-folder/Sub/File.swift`; perf-report
    ///   finds it in the checkout); nil keeps the annotation off any file. The default passes the
    ///   `#fileID` through unchanged.
    public func githubCommands(resolveFile: (String) -> String? = { $0 }) -> String {
        var perLevel: [String: Int] = [:]
        var omitted = 0
        var out = ""
        for check in orderedChecks {
            guard let level = Self.githubLevel(check, failOnImprovement: failOnImprovement) else { continue }
            perLevel[level, default: 0] += 1
            guard perLevel[level]! <= Self.annotationCapPerLevel else {
                omitted += 1
                continue
            }
            var properties: [String] = []
            if let site = check.site.flatMap(Self.callSite), let file = resolveFile(site.file) {
                properties += ["file=" + Self.escapeProperty(file), "line=\(site.line)"]
            }
            properties.append("title=" + Self.escapeProperty("perf: " + Self.title(check)))
            out += "::\(level) \(properties.joined(separator: ","))::\(Self.escapeData(Self.line(check)))\n"
        }
        for warning in warnings { out += "::warning title=perf: environment::\(Self.escapeData(warning))\n" }
        if omitted > 0 {
            out +=
                "::notice title=perf: more checks::\(omitted) more annotation\(omitted == 1 ? "" : "s") not shown "
                + "(GitHub shows \(Self.annotationCapPerLevel) per level); see the job summary or the verdict file\n"
        }
        return out
    }

    /// The annotation level of a check, nil for one that needs none.
    static func githubLevel(_ check: Check, failOnImprovement: Bool) -> String? {
        switch check.status {
        case .fail: return "error"
        case .missing, .insufficient: return check.level == .error ? "error" : check.level == .warn ? "warning" : nil
        case .warn: return "warning"
        case .improved: return failOnImprovement ? "error" : "notice"
        case .pass, .unbudgeted: return nil
        }
    }

    /// Escaping of a workflow command's message.
    static func escapeData(_ text: String) -> String {
        text.replacingAll("%", "%25").replacingAll("\r", "%0D").replacingAll("\n", "%0A")
    }

    /// Escaping of a workflow command's property value.
    static func escapeProperty(_ text: String) -> String {
        escapeData(text).replacingAll(":", "%3A").replacingAll(",", "%2C")
    }
}

extension String {
    /// Every occurrence of `target` replaced (Foundation-free, so the library's users need not
    /// import it for this).
    func replacingAll(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
