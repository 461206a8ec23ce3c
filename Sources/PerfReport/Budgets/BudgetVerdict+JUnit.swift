// JUnit XML for CI systems that read test reports: one testcase per span × metric × rule;
// breaches as <failure>, too little data as <skipped> (or <failure> where the budgets demand it).
// Valid against Jenkins' JUnit schema (junit-10.xsd, vendored as scripts/validate/junit-10.xsd),
// the strictest reader: `skipped` is an attribute of <testsuite> only, never of <testsuites>.
import Perf

extension BudgetVerdict {
    /// The verdict as a JUnit XML document: one `<testsuite>` in `<testsuites>`, one
    /// `<testcase>` per check (unbudgeted spans left out). The root carries `tests`, `failures`
    /// and `errors`; the suite carries those and `skipped`, which the Jenkins schema allows on
    /// `<testsuite>` only.
    public func junit(command: String = "check") -> String {
        let cases = checks.filter { $0.status != .unbudgeted }
        let failures = cases.filter { breaches($0) || isIncomplete($0) }.count
        let skipped = cases.filter { ($0.status == .insufficient || $0.status == .missing) && !isIncomplete($0) }.count
        let suite = "perf-report \(command)"
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml +=
            "<testsuites name=\"\(Self.xml(suite))\" tests=\"\(cases.count)\" failures=\"\(failures)\" "
            + "errors=\"0\">\n"
        xml +=
            "  <testsuite name=\"\(Self.xml(suite))\" tests=\"\(cases.count)\" failures=\"\(failures)\" "
            + "errors=\"0\" skipped=\"\(skipped)\">\n"
        for check in cases {
            var name = check.metric.isEmpty ? "present" : check.metric
            if check.kind == .regression { name += " regression" }
            if let rule = check.rule { name += " [\(rule)]" }
            xml += "    <testcase classname=\"\(Self.xml(check.subject))\" name=\"\(Self.xml(name))\""
            let line = Self.xml(Self.line(check))
            if breaches(check) || isIncomplete(check) {
                xml += ">\n      <failure message=\"\(line)\" type=\"\(check.status.rawValue)\">\(line)</failure>\n"
                xml += "    </testcase>\n"
            } else if check.status == .insufficient || check.status == .missing {
                xml += ">\n      <skipped message=\"\(line)\"/>\n    </testcase>\n"
            } else if check.status == .warn || check.status == .improved {
                xml += ">\n      <system-out>\(line)</system-out>\n    </testcase>\n"
            } else {
                xml += "/>\n"
            }
        }
        xml += "  </testsuite>\n</testsuites>\n"
        return xml
    }

    /// Text escaped for XML attributes and content; control characters XML 1.0 cannot carry
    /// are dropped.
    static func xml(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\n": out += "&#10;"
            case "\t", "\r": out += "&#\(scalar.value);"
            default:
                if scalar.value >= 0x20, scalar.value != 0xFFFE, scalar.value != 0xFFFF {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
