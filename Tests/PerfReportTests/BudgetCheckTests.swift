// Evaluation of budgets: rule precedence, every metric, minimum samples, every status, the exit
// codes they add up to.
import Perf
import Testing

@testable import PerfReport

@Suite struct BudgetCheckTests {
    private func run(
        _ json: String, _ head: ReportFigures, baseline: ReportFigures? = nil,
        options: BudgetCheck.Options = .init()
    ) throws -> BudgetVerdict {
        try BudgetCheck(budgets: BudgetFixture.budgets(json), options: options).run(
            current: head, baseline: baseline)
    }

    @Test func aLaterRuleOverridesAnEarlierOnePerMetric() throws {
        let head = BudgetFixture.figures(["api.get": BudgetFixture.span(count: 300, p50: 5, p95: 900)])
        let verdict = try run(
            #"""
            {"version":1,"spans":[
              {"match":"api.*","limits":{"p95":{"max":"800ms"},"count":{"max":100}}},
              {"match":"api.get","limits":{"p95":{"max":"1s"}}}]}
            """#, head)
        let p95 = try #require(BudgetFixture.check(verdict, "api.get", "p95"))
        #expect(p95.status == .pass, "the exact rule's 1s replaces the glob's 800ms")
        #expect(p95.rule == #"spans[1] ("api.get")"#)
        let count = try #require(BudgetFixture.check(verdict, "api.get", "count"))
        #expect(count.status == .fail, "count is still limited by the earlier rule")
        #expect(count.rule == #"spans[0] ("api.*")"#)
        #expect(verdict.exitCode == 1)
    }

    /// Each metric against a limit just below and just above its value.
    @Test(arguments: BudgetMetric.allCases)
    func everyMetricIsChecked(metric: BudgetMetric) throws {
        let span = BudgetFixture.span(count: 1000, p50: 20, p95: 40, max: 90, overBudget: 50)
        let value = try #require(span.values[metric])
        let head = BudgetFixture.figures(["s": span])
        let format = { (number: Double) in BudgetQuantity(number, metric.unit) }
        let limitValue = { (number: Double) -> String in
            metric.unit == .count ? format(number).description : "\"\(format(number))\""
        }
        for (bound, expected) in [(value, BudgetVerdict.Status.pass), (value - 1, .fail)] {
            let verdict = try run(
                #"{"version":1,"spans":[{"match":"s","limits":{"\#(metric.rawValue)":{"max":\#(limitValue(bound))}}}]}"#,
                head)
            let check = try #require(BudgetFixture.check(verdict, "s", metric.rawValue))
            #expect(check.status == expected, "\(metric) = \(value) against max \(bound)")
            #expect(check.current == value)
        }
    }

    @Test func minAndRangeLimits() throws {
        let head = BudgetFixture.figures(["s": BudgetFixture.span(count: 5)])
        let verdict = try run(
            #"{"version":1,"spans":[{"match":"s","limits":{"count":{"min":6},"sum":{"range":["1ms","60ms"]}}}]}"#, head)
        #expect(BudgetFixture.check(verdict, "s", "count")?.status == .fail)
        #expect(BudgetFixture.check(verdict, "s", "count")?.expectation == "≥ 6")
        #expect(BudgetFixture.check(verdict, "s", "sum")?.status == .pass)
        #expect(BudgetFixture.check(verdict, "s", "sum")?.expectation == "in [1ms, 60ms]")
    }

    @Test func levelsWarnAndOff() throws {
        let head = BudgetFixture.figures(["s": BudgetFixture.span(count: 5)])
        let warned = try run(
            #"{"version":1,"spans":[{"match":"s","level":"warn","limits":{"count":{"max":1}}}]}"#, head)
        #expect(BudgetFixture.check(warned, "s", "count")?.status == .warn)
        #expect(warned.exitCode == 0)
        #expect(warned.outcome == .warn)
        let off = try run(#"{"version":1,"spans":[{"match":"s","limits":{"count":{"max":1,"level":"off"}}}]}"#, head)
        #expect(BudgetFixture.check(off, "s", "count") == nil)
        #expect(off.outcome == .pass)
    }

    @Test(arguments: [(BudgetMetric.p50, 10), (.p90, 50), (.p95, 100), (.p99, 500), (.max, 1)])
    func minimumSamplesAreAboutFiveBeyondTheQuantile(metric: BudgetMetric, needed: Int) throws {
        #expect(metric.automaticMinimumSamples == Int64(needed))
        for (count, expected) in [(needed - 1, BudgetVerdict.Status.insufficient), (needed, .pass)] where count > 0 {
            let head = BudgetFixture.figures(["s": BudgetFixture.span(count: count)])
            let verdict = try run(
                #"{"version":1,"spans":[{"match":"s","limits":{"\#(metric.rawValue)":{"max":"1s"}}}]}"#, head)
            #expect(BudgetFixture.check(verdict, "s", metric.rawValue)?.status == expected, "n=\(count)")
        }
    }

    @Test func insufficientDataExitsFourOnlyWhenTheBudgetsDemandIt() throws {
        let head = BudgetFixture.figures(["s": BudgetFixture.span(count: 20)])
        let lenient = try run(#"{"version":1,"spans":[{"match":"s","limits":{"p95":{"max":"1s"}}}]}"#, head)
        #expect(lenient.exitCode == 0)
        let strict = try run(
            #"{"version":1,"defaults":{"onInsufficient":"error"},"spans":[{"match":"s","limits":{"p95":{"max":"1s"}}}]}"#,
            head)
        #expect(strict.exitCode == 4)
        #expect(strict.outcome == .incomplete)
        let explicit = try run(
            #"{"version":1,"spans":[{"match":"s","minSamples":20,"limits":{"p95":{"max":"1s"}}}]}"#, head)
        #expect(BudgetFixture.check(explicit, "s", "p95")?.status == .pass)
        #expect(
            try BudgetFixture.budgets(#"{"version":1,"spans":[{"match":"s","minSamples":20}]}"#).spans[0].minSamples
                == .atLeast(20))
    }

    @Test func aMissingBudgetedSpanIsIncompleteData() throws {
        let head = BudgetFixture.figures(["other": BudgetFixture.span(count: 1)])
        let verdict = try run(#"{"version":1,"spans":[{"match":"api.get","limits":{"count":{"min":1}}}]}"#, head)
        let missing = try #require(BudgetFixture.check(verdict, "api.get", "", .presence))
        #expect(missing.status == .missing)
        #expect(verdict.exitCode == 4)
        #expect(BudgetFixture.check(verdict, "other", "", .presence)?.status == .unbudgeted)
        let warned = try run(
            #"{"version":1,"defaults":{"onMissing":"warn"},"spans":[{"match":"api.get","limits":{}}]}"#, head)
        #expect(warned.exitCode == 0)
        #expect(warned.outcome == .warn)
    }

    /// A typo in an exact `match` says which spans of the report it probably meant.
    @Test(arguments: [
        ("api.gte", ["api.get"]), ("api.lst", ["api.list"]), ("API.GET", ["api.get"]), ("api.gt", ["api.get"]),
        ("api.sets", ["api.gets", "api.set"]), ("db.qeury", ["db.query"]), ("cache.fill", []), ("x", []),
    ])
    func aMissingSpanSuggestsTheClosestNames(match: String, expected: [String]) throws {
        let head = BudgetFixture.figures(
            ["api.get", "api.gets", "api.set", "api.list", "db.query"].reduce(into: [:]) {
                $0[$1] = BudgetFixture.span(count: 1)
            })
        let verdict = try run(#"{"version":1,"spans":[{"match":"\#(match)","limits":{"count":{"min":1}}}]}"#, head)
        let missing = try #require(BudgetFixture.check(verdict, match, "", .presence))
        #expect(missing.status == .missing && missing.suggestions == expected)
        let line = BudgetVerdict.line(missing)
        if expected.isEmpty {
            #expect(line.hasSuffix("found nothing") && !line.contains("did you mean"))
        } else {
            #expect(line.contains("found nothing · did you mean \(expected[0])"))
        }
    }

    @Test func suggestionsAreTheNearestNamesInOrder() {
        #expect(
            BudgetCheck.closest(to: "api.sets", among: ["api.set", "api.sets", "api.gets", "api.get"])
                == ["api.gets", "api.set"], "the name itself is not a suggestion, nor the farther api.get")
        #expect(
            BudgetCheck.closest(to: "abcdefghi", among: ["a", "bacdefghi", "abcdefgh", "abcxyzghi"]) == [
                "abcdefgh", "bacdefghi",
            ])
        #expect(BudgetCheck.closest(to: "a", among: ["b", "c", "d", "e"]) == ["b", "c", "d"], "at most three")
        #expect(BudgetCheck.editDistance(Array("api.get"), Array("api.gte"), limit: 5) == 1, "a swap is one edit")
        #expect(BudgetCheck.editDistance(Array("kitten"), Array("sitting"), limit: 5) == 3)
        #expect(BudgetCheck.editDistance(Array("kitten"), Array("sitting"), limit: 2) == nil)
        #expect(BudgetCheck.editDistance(Array(""), Array("ab"), limit: 2) == 2)
        let line = BudgetVerdict.line(
            BudgetVerdict.Check(
                subject: "api.gt", metric: "", kind: .presence, status: .missing, level: .error, unit: .count,
                expectation: "present in the report", suggestions: ["api.get", "api.gets", "api.set"]))
        #expect(
            line == "∅ api.gt (error): expected present in the report, found nothing · did you mean api.get, "
                + "api.gets or api.set?")
    }

    @Test func aBreachWinsOverIncompleteData() throws {
        let head = BudgetFixture.figures(["s": BudgetFixture.span(count: 5)])
        let verdict = try run(
            #"{"version":1,"spans":[{"match":"s","limits":{"count":{"max":1}}},{"match":"gone","limits":{}}]}"#, head)
        #expect(verdict.tally[.missing] == 1)
        #expect(verdict.exitCode == 1)
    }

    @Test func hangAndLedgerLimits() throws {
        let head = BudgetFixture.figures(["s": BudgetFixture.span(count: 1)], hangs: 2)
        let verdict = try run(
            #"{"version":1,"hangs":{"count":{"max":1,"message":"no hangs"},"fatal":{"max":0}},"ledger":{"malformedLines":{"max":0}}}"#,
            head)
        #expect(BudgetFixture.check(verdict, "hangs", "count")?.status == .fail)
        #expect(BudgetFixture.check(verdict, "hangs", "count")?.message == "no hangs")
        #expect(BudgetFixture.check(verdict, "hangs", "fatal")?.status == .pass)
        #expect(BudgetFixture.check(verdict, "ledger", "malformedLines")?.status == .pass)
        #expect(verdict.exitCode == 1)
    }

    @Test func debugBuildsRefuseAbsoluteTimeBudgetsUnlessAllowed() throws {
        let head = BudgetFixture.figures(["s": BudgetFixture.span(count: 500)], build: "debug")
        let timed = #"{"version":1,"spans":[{"match":"s","limits":{"p95":{"max":"1s"}}}]}"#
        #expect {
            try run(timed, head)
        } throws: { error in
            guard let error = error as? BudgetsError else { return false }
            return error.code == .debugBuild && error.description.contains("--allow-debug")
        }
        #expect(try run(timed, head, options: .init(allowDebug: true)).exitCode == 0)
        // Counts are not timings: a debug build is checked as it is.
        #expect(try run(#"{"version":1,"spans":[{"match":"s","limits":{"count":{"max":1000}}}]}"#, head).exitCode == 0)
    }
}
