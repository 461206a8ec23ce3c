// Figures and budgets built in code for the budget tests: no disk, every number visible in the test.
import Perf

@testable import PerfReport

enum BudgetFixture {
    /// A span's figures: p50/p90/p95/p99 default to `p50`, max and sum follow.
    static func span(
        count: Int, p50: Double = 10, p95: Double? = nil, max: Double? = nil, overBudget: Int = 0,
        site: String? = "App/API.swift:42"
    ) -> ReportFigures.Span {
        let p95 = p95 ?? p50
        return ReportFigures.Span(
            values: [
                .count: Double(count), .p50: p50, .p90: p95, .p95: p95, .p99: p95, .max: max ?? p95,
                .sum: p50 * Double(count), .overBudget: Double(overBudget),
                .overBudgetRate: count > 0 ? Double(overBudget) / Double(count) * 100 : 0,
            ], site: site)
    }

    static func figures(
        _ spans: [String: ReportFigures.Span], hangs: Double = 0, fatal: Double = 0, build: String = "release",
        cpu: String = "cpu-a", path: String = "head.json"
    ) -> ReportFigures {
        ReportFigures(
            path: path, spans: spans,
            hangs: ["count": hangs, "fatal": fatal, "suppressed": 0, "maxMs": hangs > 0 ? 300 : 0, "totalMs": 0],
            ledger: ["events": 10, "malformedLines": 0, "unknownKinds": 0, "tornTail": 0],
            environment: ["buildConfiguration": build, "cpuModel": cpu, "swiftVersion": "6.3"])
    }

    static func budgets(_ json: String) throws -> Budgets {
        try Budgets(bytes: Array(json.utf8), path: "budgets.json")
    }

    /// The one check of `subject`/`metric`/`kind` in `verdict`.
    static func check(
        _ verdict: BudgetVerdict, _ subject: String, _ metric: String, _ kind: BudgetVerdict.Kind = .limit
    ) -> BudgetVerdict.Check? {
        let found = verdict.checks.filter { $0.subject == subject && $0.metric == metric && $0.kind == kind }
        return found.count == 1 ? found[0] : nil
    }
}
