// The exit codes as a type: the numbers the contract promises (`--help`, and the Reports article's
// one-line list), and the verdict outcomes mapped to the same codes the verdict prints ("→ exit N").
import PerfReport
import Testing

@testable import PerfReportCLI

@Suite struct ExitCodeContractTests {
    @Test func theNumbersAreTheContract() {
        let codes: [ExitCode: Int32] = [.success: 0, .breach: 1, .usage: 2, .invalidInput: 3, .incompleteData: 4]
        for code in ExitCode.allCases { #expect(code.rawValue == codes[code], "\(code)") }
        #expect(ExitCode.allCases.count == codes.count)
        let help = PerfReportCommand.run(["--help"]).stdout
        for code in ExitCode.allCases { #expect(help.contains("  \(code.rawValue)  \(code.meaning)\n")) }
    }

    /// The Reports article lists every code with the meaning `--help` gives it, in order.
    @Test func theReportsArticleListsTheSameMeanings() throws {
        let section = try ContractArticle(module: "PerfReport", "Reports").section("## Exit codes")
        let text = section.joined(separator: " ").split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let list = ExitCode.allCases.map { "\($0.rawValue) \($0.meaning)" }.joined(separator: "; ")
        #expect(text.contains("Of every subcommand: \(list)."), "Reports.md, Exit codes: \(text)")
    }

    /// One verdict per outcome, each from a single check.
    @Test(arguments: [
        (BudgetVerdict.Status.pass, Budgets.Level.error, BudgetVerdict.Outcome.pass, ExitCode.success),
        (.warn, .warn, .warn, .success),
        (.fail, .error, .fail, .breach),
        (.missing, .error, .incomplete, .incompleteData),
    ])
    func outcomesMapToTheVerdictsOwnExitCode(
        status: BudgetVerdict.Status, level: Budgets.Level, outcome: BudgetVerdict.Outcome, code: ExitCode
    ) {
        let check = BudgetVerdict.Check(
            subject: "api.get", metric: "count", kind: .limit, status: status, level: level, unit: .count,
            expectation: "≥ 1")
        let verdict = BudgetVerdict(checks: [check], reports: ["r.json"])
        #expect(verdict.outcome == outcome)
        #expect(ExitCode(verdict.outcome) == code)
        #expect(code.rawValue == verdict.exitCode, "the CLI and the verdict's own text agree")
    }
}
