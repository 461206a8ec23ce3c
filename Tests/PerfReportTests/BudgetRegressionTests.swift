// Regressions against a baseline: both floors, count-from-zero, improvements, environment
// mismatch, aggregation of several runs, and `compare`.
import Perf
import Testing

@testable import PerfReport

@Suite struct BudgetRegressionTests {
    private let budgets = #"{"version":1,"spans":[{"match":"api.get","limits":{"count":{"min":1}}}]}"#

    private func verdict(
        head: Double, base: Double, n: Int = 200, failOnImprovement: Bool = false, budgets: String? = nil
    ) throws -> BudgetVerdict {
        let check = BudgetCheck(
            budgets: try BudgetFixture.budgets(budgets ?? self.budgets),
            options: .init(failOnImprovement: failOnImprovement))
        return try check.run(
            current: BudgetFixture.figures(["api.get": BudgetFixture.span(count: n, p50: head)]),
            baseline: BudgetFixture.figures(["api.get": BudgetFixture.span(count: n, p50: base)], path: "base.json"))
    }

    /// Default floors: +15 % and +2 ms, both needed.
    @Test(arguments: [
        (100.0, 100.0, BudgetVerdict.Status.pass), (114, 100, .pass), (116, 100, .fail),
        (10, 8, .pass),  // +25 % but only +2 ms: under the absolute floor
        (10.5, 8, .fail), (1.9, 1, .pass),  // +90 % but +0.9 ms
        (80, 100, .improved), (99, 100, .pass),
    ])
    func aRegressionMustExceedBothFloors(head: Double, base: Double, expected: BudgetVerdict.Status) throws {
        let verdict = try verdict(head: head, base: base)
        let check = try #require(BudgetFixture.check(verdict, "api.get", "p50", .regression))
        #expect(check.status == expected)
        #expect(check.baseline == base)
        #expect(verdict.exitCode == (expected == .fail ? 1 : 0))
    }

    @Test func improvementsFailOnlyWhenAskedTo() throws {
        #expect(try verdict(head: 50, base: 100).exitCode == 0)
        let strict = try verdict(head: 50, base: 100, failOnImprovement: true)
        #expect(BudgetFixture.check(strict, "api.get", "p50", .regression)?.status == .improved)
        #expect(strict.exitCode == 1)
    }

    @Test func tooFewSamplesOnEitherSideIsInsufficient() throws {
        let check = try #require(
            BudgetFixture.check(try verdict(head: 500, base: 100, n: 9), "api.get", "p50", .regression))
        #expect(check.status == .insufficient)
    }

    @Test func floorsComeFromTheRule() throws {
        let budgets = #"""
            {"version":1,"spans":[{"match":"api.get","regression":{"maxIncrease":"50%","minDelta":"1ms","level":"warn"}}]}
            """#
        #expect(
            BudgetFixture.check(try verdict(head: 140, base: 100, budgets: budgets), "api.get", "p50", .regression)?
                .status == .pass)
        let warned = try verdict(head: 160, base: 100, budgets: budgets)
        #expect(BudgetFixture.check(warned, "api.get", "p50", .regression)?.status == .warn)
        #expect(warned.exitCode == 0)
    }

    @Test func aCountFromZeroIsARegressionWhateverTheFloors() throws {
        let budgets = try BudgetFixture.budgets(
            #"{"version":1,"spans":[{"match":"s","regression":{"stat":"overBudget","maxIncrease":"500%","minDelta":100}}]}"#
        )
        let head = BudgetFixture.figures(["s": BudgetFixture.span(count: 100, overBudget: 1)], hangs: 1)
        let base = BudgetFixture.figures(["s": BudgetFixture.span(count: 100, overBudget: 0)], hangs: 0)
        let verdict = try BudgetCheck(budgets: budgets).run(current: head, baseline: base)
        #expect(BudgetFixture.check(verdict, "s", "overBudget", .regression)?.status == .fail)
        #expect(BudgetFixture.check(verdict, "hangs", "count", .regression)?.status == .fail)
        #expect(verdict.exitCode == 1)
        let same = try BudgetCheck(budgets: budgets).run(current: base, baseline: base)
        #expect(same.exitCode == 0)
    }

    @Test func aRequiredBaselineThatIsAbsentIsIncomplete() throws {
        let budgets = try BudgetFixture.budgets(
            #"{"version":1,"defaults":{"regression":{"requireBaseline":true}},"spans":[{"match":"s","limits":{}}]}"#)
        let verdict = try BudgetCheck(budgets: budgets).run(
            current: BudgetFixture.figures(["s": BudgetFixture.span(count: 1)]))
        #expect(BudgetFixture.check(verdict, "baseline", "", .presence)?.status == .missing)
        #expect(verdict.exitCode == 4)
    }

    @Test func anEnvironmentMismatchWarnsButDoesNotFail() throws {
        let parsed = try BudgetFixture.budgets(budgets)
        let head = BudgetFixture.figures(["api.get": BudgetFixture.span(count: 200)], cpu: "cpu-a")
        let base = BudgetFixture.figures(["api.get": BudgetFixture.span(count: 200)], cpu: "cpu-b")
        let verdict = try BudgetCheck(budgets: parsed).run(current: head, baseline: base)
        #expect(verdict.warnings.count == 1)
        #expect(verdict.warnings[0].contains("cpuModel is 'cpu-a', the baseline's is 'cpu-b'"))
        #expect(verdict.outcome == .warn)
        #expect(verdict.exitCode == 0)
    }

    @Test(arguments: [
        (ReportFigures.Aggregation.median, 20.0), (.optimistic, 10), (.pessimistic, 90),
    ])
    func aggregationCombinesRunsMetricByMetric(aggregation: ReportFigures.Aggregation, p50: Double) {
        let runs = [10.0, 90, 20].map { BudgetFixture.figures(["s": BudgetFixture.span(count: 100, p50: $0)]) }
        let combined = ReportFigures.aggregate(runs, by: aggregation)
        #expect(combined.spans["s"]?.values[.p50] == p50)
        #expect(combined.spans["s"]?.count == 100)
        let even = ReportFigures.aggregate(Array(runs.prefix(2)), by: .median)
        #expect(even.spans["s"]?.values[.p50] == 50)
    }

    @Test func compareListsEveryChangeWithTheSameFloors() {
        let base = BudgetFixture.figures(
            ["fast": BudgetFixture.span(count: 200, p50: 10, p95: 20), "gone": BudgetFixture.span(count: 5)],
            path: "base.json")
        let head = BudgetFixture.figures(
            ["fast": BudgetFixture.span(count: 200, p50: 20, p95: 21), "new": BudgetFixture.span(count: 5)])
        let verdict = BudgetComparison().compare(base: base, head: head)
        #expect(BudgetFixture.check(verdict, "fast", "p50", .regression)?.status == .fail)
        #expect(BudgetFixture.check(verdict, "fast", "p95", .regression)?.status == .pass)
        #expect(BudgetFixture.check(verdict, "gone", "", .presence)?.status == .missing)
        #expect(BudgetFixture.check(verdict, "new", "p50", .regression)?.status == .insufficient)
        #expect(verdict.exitCode == 1)
        let table = verdict.comparisonTable.split(separator: "\n").map(String.init)
        #expect(table[0].hasPrefix("SPAN"))
        #expect(table.contains { $0.hasPrefix("fast ") && $0.contains("+100.0%") && $0.hasSuffix("✘ fail") })
    }
}
