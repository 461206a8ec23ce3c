// `perf-report compare BASE HEAD`: every span's change between two reports, with the floors of
// a budget check's regressions, no budgets file needed.
import Foundation
import Perf
import PerfReport

enum CompareCommand {
    static let spec = CommandSpec(
        name: "compare", overview: "Compare two performance reports span by span.",
        arguments: [
            .init(name: "base", help: "The report before the change."),
            .init(name: "head", help: "The report after the change."),
        ],
        options: [
            .value("max-increase", valueName: "percent", help: "The relative floor (default: 15%)."),
            .value("min-delta", valueName: "duration", help: "The absolute floor (default: 2ms)."),
            .value(
                "format", valueName: "format", choices: VerdictFormat.allCases.map(\.rawValue),
                help: "Output: text (a table), json, github, junit or markdown (default: text)."),
            .value("output", short: "o", valueName: "file", help: "Also write the JSON verdict file here."),
            .flag("fail-on-improvement", help: "An improvement fails the comparison too."),
        ],
        exitCodes: CheckCommand.exitCodes.filter { $0.0 != .incompleteData })

    static func run(_ parsed: CommandSpec.Parsed, environment: [String: String], currentDirectory: String)
        -> CommandResult
    {
        let output = parsed.value("output")
        func fail(_ result: CommandResult) -> CommandResult {
            VerdictOutput.failing(result, command: .compare, output: output)
        }
        var policy = Budgets.RegressionPolicy()
        if let text = parsed.value("max-increase") {
            guard let quantity = BudgetQuantity(parsing: text), quantity.unit == .percent else {
                return fail(
                    PerfReportCommand.usageError(
                        .badValue("--max-increase", value: text, expected: "a percentage such as 15%"), spec))
            }
            policy.maxIncreasePercent = quantity.value
        }
        if let text = parsed.value("min-delta") {
            guard let quantity = BudgetQuantity(parsing: text), quantity.unit == .milliseconds else {
                return fail(
                    PerfReportCommand.usageError(
                        .badValue("--min-delta", value: text, expected: "a duration such as 2ms"), spec))
            }
            policy.minDelta = quantity
        }
        let verdict: BudgetVerdict
        do {
            let base = try ReportFigures(contentsOf: URL(fileURLWithPath: parsed.positionals[0]))
            let head = try ReportFigures(contentsOf: URL(fileURLWithPath: parsed.positionals[1]))
            verdict = BudgetComparison(policy: policy, failOnImprovement: parsed.flag("fail-on-improvement"))
                .compare(base: base, head: head)
        } catch {
            return fail(PerfReportCommand.invalidInput(error))
        }
        return VerdictOutput.render(
            verdict, command: .compare, format: parsed.value("format", as: VerdictFormat.self) ?? .text,
            output: output, environment: environment, currentDirectory: currentDirectory)
    }
}
