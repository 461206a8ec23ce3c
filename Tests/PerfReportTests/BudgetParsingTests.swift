// The budgets file: unit strings, strictness, and errors that name the rule.
import Perf
import PerfCore
import Testing

@testable import PerfReport

@Suite struct BudgetParsingTests {
    @Test(arguments: [
        ("250ms", 250.0, BudgetQuantity.Unit.milliseconds), ("1.5s", 1500, .milliseconds),
        ("800us", 0.8, .milliseconds), ("800µs", 0.8, .milliseconds), ("10%", 10, .percent), ("0ms", 0, .milliseconds),
    ])
    func unitStringsParse(text: String, value: Double, unit: BudgetQuantity.Unit) throws {
        let quantity = try #require(BudgetQuantity(parsing: text))
        #expect(quantity.unit == unit)
        #expect(abs(quantity.value - value) < 1e-9)
    }

    @Test(arguments: ["250", "ms", "-5ms", "1e3ms", "nanms", "infs", "5 ms", "5min", "", "0x10ms", "1,5s"])
    func malformedUnitStringsAreRejected(text: String) {
        #expect(BudgetQuantity(parsing: text) == nil)
    }

    @Test func quantitiesPrintAsTheFileWritesThem() {
        #expect(BudgetQuantity(800, .milliseconds).description == "800ms")
        #expect(BudgetQuantity(1500, .milliseconds).description == "1.5s")
        #expect(BudgetQuantity(0.8, .milliseconds).description == "800us")
        #expect(BudgetQuantity(12.5, .percent).description == "12.5%")
        #expect(BudgetQuantity(200, .count).description == "200")
    }

    @Test func theContractExampleParses() throws {
        let budgets = try BudgetFixture.budgets(
            """
            {"version":1,
             "defaults":{"level":"error","onMissing":"error","minSamples":"auto",
                         "regression":{"stat":"p50","maxIncrease":"15%","minDelta":"2ms"}},
             "spans":[{"match":"api.*","limits":{"p95":{"max":"800ms"},"max":{"max":"3s","level":"warn"}}},
                      {"match":"api.get","limits":{"count":{"max":200}}}],
             "hangs":{"count":{"max":0},"maxMs":{"max":"250ms"}}}
            """)
        #expect(budgets.spans.count == 2)
        #expect(budgets.spans[0].limits[.p95]?.max == BudgetQuantity(800, .milliseconds))
        #expect(budgets.spans[0].limits[.max]?.level == .warn)
        #expect(budgets.spans[1].limits[.count]?.max == BudgetQuantity(200, .count))
        #expect(budgets.hangs["maxMs"]?.max == BudgetQuantity(250, .milliseconds))
        #expect(budgets.defaults.regression.maxIncreasePercent == 15)
        #expect(budgets.defaults.minSamples == .automatic)
    }

    /// Each bad file, and the words its error must contain (the rule, the problem).
    @Test(arguments: [
        (
            #"{"version":1,"spans":[{"match":"api.*","limits":{"p42":{"max":"1ms"}}}]}"#,
            ["spans[0] (\"api.*\")", "unknown metric \"p42\""]
        ),
        (
            #"{"version":1,"spans":[{"match":"a","limits":{"p95":{"max":800}}}]}"#,
            ["spans[0] (\"a\")", "is a count, but p95 is a duration"]
        ),
        (#"{"version":1,"spans":[{"match":"a","limits":{"count":{"max":"5ms"}}}]}"#, ["spans[0]", "count is a count"]),
        (#"{"version":1,"spans":[{"match":"a","limits":{"p95":{"max":"800"}}}]}"#, ["spans[0]", "not a quantity"]),
        (
            #"{"version":1,"spans":[{"match":"a","limits":{"p95":{"max":"1ms","level":"fatal"}}}]}"#,
            ["spans[0]", "\"off\", \"warn\" or \"error\""]
        ),
        (#"{"version":1,"spans":[{"match":"a","limit":{}}]}"#, ["spans[0] (\"a\")", "unknown key \"limit\""]),
        (#"{"version":1,"spans":[{"limits":{}}]}"#, ["spans[0]", "needs a \"match\""]),
        (#"{"version":1,"spans":[{"match":"a","limits":{"p95":{"min":"5ms","max":"1ms"}}}]}"#, ["above the maximum"]),
        (#"{"version":1,"spans":[{"match":"a","limits":{"p95":{"range":["1ms"]}}}]}"#, ["range must be [low, high]"]),
        (#"{"version":1,"hangs":{"stalls":{"max":0}}}"#, ["hangs", "unknown metric \"stalls\""]),
        (#"{"version":1,"defaults":{"regression":{"maxIncrease":15}}}"#, ["defaults.regression", "percentage"]),
        (#"{"version":1,"defaults":{"regression":{"stat":"count"}}}"#, ["does not measure the stat count"]),
        (#"{"version":2}"#, ["version 2"]), (#"{"spans":[]}"#, ["missing \"version\""]), ("[1]", ["not a JSON object"]),
        ("{", ["not valid JSON"]),
    ])
    func invalidFilesNameTheRuleAndTheProblem(json: String, words: [String]) {
        #expect {
            try BudgetFixture.budgets(json)
        } throws: { error in
            guard let error = error as? BudgetsError else { return false }
            let text = error.description
            return error.code == .invalidBudgets && text.hasPrefix("invalid budgets file 'budgets.json': ")
                && words.allSatisfy { text.contains($0) }
        }
    }

    /// JSON allows no comma before `]` or `}`; the message names the file, line and column.
    @Test(arguments: [
        (#"{"version":1,"spans":[{"match":"a"},]}"#, "line 1, column 36: a trailing comma before ']'"),
        (#"{"version":1,"spans":[{"match":"é"},]}"#, "line 1, column 36: a trailing comma before ']'"),
        (
            "{\n  \"version\": 1,\n  \"hangs\": {\"count\": {\"max\": 0},},\n}\n",
            "line 3, column 32: a trailing comma before '}'"
        ),
        ("{\"version\":1,\r\n\"spans\":[\r\n]\t,\r\n\t}", "line 3, column 3: a trailing comma before '}'"),
        (
            #"{"version":1,"spans":[{"match":"a","limits":{"count":{"max":1,}}}]}"#,
            "line 1, column 62: a trailing comma before '}'"
        ),
    ])
    func trailingCommasAreRefusedWithTheirPlace(json: String, words: String) {
        #expect {
            try BudgetFixture.budgets(json)
        } throws: { error in
            guard let error = error as? BudgetsError else { return false }
            let text = error.description
            return error.code == .invalidBudgets && text.hasPrefix("invalid budgets file 'budgets.json': line ")
                && text.contains(words) && text.hasSuffix("which JSON does not allow; remove it")
        }
    }

    /// Commas inside strings, escaped quotes included, are text, not trailing commas.
    @Test func commasInsideStringsAreNotTrailingCommas() throws {
        for match in [#"a,]"#, #"a,}"#, #"a\",]"#, #"a\\"#] {
            let budgets = try BudgetFixture.budgets(#"{"version":1,"spans":[{"match":"\#(match)"}]}"#)
            #expect(budgets.spans.count == 1, "\(match)")
        }
        #expect((try? JSONScanner(Array(#"{"a":[1,2],"b":"x,}"}"#.utf8))) != nil)
        let error = #expect(throws: JSONSyntaxError.self) { try JSONScanner(Array(#"{"a":"\\",}"#.utf8)) }
        #expect(error?.column == 10 && error?.kind == .trailingComma)
    }

    @Test(arguments: [
        ("api.*", ["api.get", "api.v2.put"]), ("api.???", ["api.get"]), ("*put", ["api.v2.put"]),
        ("api.get", ["api.get"]), ("*", ["api.get", "api.v2.put"]),
    ])
    func globsMatchDotsAndSingleCharacters(pattern: String, expected: [String]) throws {
        let head = BudgetFixture.figures([
            "api.get": BudgetFixture.span(count: 1), "api.v2.put": BudgetFixture.span(count: 1),
        ])
        let budgets = try BudgetFixture.budgets(
            #"{"version":1,"spans":[{"match":"\#(pattern)","limits":{"count":{"min":1}}}]}"#)
        let verdict = try BudgetCheck(budgets: budgets).run(current: head)
        #expect(verdict.checks.filter { $0.kind == .limit }.map(\.subject).sorted() == expected)
        let unbudgeted = verdict.checks.filter { $0.status == .unbudgeted }.map(\.subject).sorted()
        #expect(unbudgeted == ["api.get", "api.v2.put"].filter { !expected.contains($0) })
    }

    @Test func aGlobMatchingNoSpanIsAnErrorNamingTheRule() throws {
        let budgets = try BudgetFixture.budgets(
            #"{"version":1,"spans":[{"match":"api.*","limits":{"count":{"min":1}}},{"match":"apl.*","limits":{}}]}"#)
        let head = BudgetFixture.figures(["api.get": BudgetFixture.span(count: 1)])
        #expect {
            try BudgetCheck(budgets: budgets).run(current: head)
        } throws: { error in
            (error as? BudgetsError)?.description.contains("spans[1] (\"apl.*\"): matches no span") == true
        }
    }
}
