// The verdict file (`--format json`, and `-o FILE` on every path): the nuance a wrapper that
// flattens exit codes would lose, in one deterministic JSON document.
import Perf

extension BudgetVerdict {
    /// The verdict file's `schema`.
    public static let schema = "perf-verdict"
    /// The verdict file's `schemaVersion`.
    public static let schemaVersion = 1

    /// The verdict file: `schema`, `schemaVersion`, `verdict`, `exitCode`, `reports`,
    /// `baseline`, `warnings`, `summary` and every check with current, baseline, delta, n,
    /// budget and call site; keys sorted, one line.
    public func json(command: String = "check") -> String {
        let object: [String: ReportJSON] = [
            "schema": .string(Self.schema), "schemaVersion": .int(Int64(Self.schemaVersion)),
            "command": .string(command), "verdict": .string(outcome.rawValue), "exitCode": .int(Int64(exitCode)),
            "reports": .array(reports.map(ReportJSON.string)), "baseline": .optional(baseline),
            "warnings": .array(warnings.map(ReportJSON.string)),
            "failOnImprovement": .bool(failOnImprovement),
            "summary": .object(tally.reduce(into: [:]) { $0[$1.key.rawValue] = .int(Int64($1.value)) }),
            "checks": .array(checks.map(Self.json)),
        ]
        return String(decoding: ReportJSON.object(object).bytes, as: UTF8.self) + "\n"
    }

    /// The verdict file of a run that could not check at all (usage error, bad input).
    public static func errorJSON(command: String, exitCode: Int32, message: String) -> String {
        let object: [String: ReportJSON] = [
            "schema": .string(schema), "schemaVersion": .int(Int64(schemaVersion)), "command": .string(command),
            "verdict": .string("error"), "exitCode": .int(Int64(exitCode)), "error": .string(message),
            "checks": .array([]),
        ]
        return String(decoding: ReportJSON.object(object).bytes, as: UTF8.self) + "\n"
    }

    static func json(_ check: Check) -> ReportJSON {
        func number(_ value: Double?) -> ReportJSON { value.map(ReportJSON.double) ?? .null }
        var site = ReportJSON.null
        if let location = check.site.flatMap(Self.callSite) {
            site = .object(["file": .string(location.file), "line": .int(Int64(location.line))])
        }
        return .object([
            "span": check.kind == .presence && check.subject == "baseline" ? .null : .string(check.subject),
            "metric": .string(check.metric), "kind": .string(check.kind.rawValue),
            "status": .string(check.status.rawValue), "level": .string(check.level.rawValue),
            "unit": .string(check.unit.rawValue), "current": number(check.current), "baseline": number(check.baseline),
            "delta": number(check.delta), "deltaPercent": number(check.deltaPercent),
            "n": check.samples.map(ReportJSON.int) ?? .null, "budget": .string(check.expectation),
            "rule": .optional(check.rule), "site": site, "message": .optional(check.message),
            "line": .string(line(check)),
        ])
    }

    /// `Module/File.swift:88` split into file and line.
    public static func callSite(_ site: String) -> (file: String, line: Int)? {
        guard let colon = site.lastIndex(of: ":"), let line = Int(site[site.index(after: colon)...]), line > 0 else {
            return nil
        }
        return (String(site[..<colon]), line)
    }
}
