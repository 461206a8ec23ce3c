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
            .init(long: "max-increase", valueName: "percent", help: "The relative floor (default: 15%)."),
            .init(long: "min-delta", valueName: "duration", help: "The absolute floor (default: 2ms)."),
            .init(
                long: "format", valueName: "format",
                help: "Output: text (a table), json, github, junit or markdown (default: text)."),
            .init(short: "o", long: "output", valueName: "file", help: "Also write the JSON verdict file here."),
        ],
        exitCodes: CheckCommand.exitCodes.filter { $0.0 != ExitCode.incompleteData })

    static var help: String {
        spec.help.replacingOccurrences(
            of: "  -h, --help",
            with: CommandSpec.helpLine("--fail-on-improvement", "An improvement fails the comparison too.")
                + "  -h, --help")
    }

    static func run(_ arguments: [String], environment: [String: String]) -> CommandResult {
        let output = VerdictOutput.outputPath(in: arguments)
        func fail(_ result: CommandResult) -> CommandResult {
            VerdictOutput.failing(result, command: "compare", output: output)
        }
        let failOnImprovement = arguments.contains("--fail-on-improvement")
        let parsed: CommandSpec.Parsed
        switch spec.parse(arguments.filter { $0 != "--fail-on-improvement" }) {
        case .failure(let error): return fail(PerfReportCommand.usageError(error.message, spec))
        case .success(let value): parsed = value
        }
        if parsed.wantsHelp { return CommandResult(stdout: help) }
        let format = parsed.values["format"] ?? "text"
        guard VerdictOutput.formats.contains(format) else {
            return fail(
                PerfReportCommand.usageError(
                    "'--format' must be one of text, json, github, junit, markdown, not '\(format)'", spec))
        }
        var policy = Budgets.RegressionPolicy()
        if let text = parsed.values["max-increase"] {
            guard let quantity = BudgetQuantity(parsing: text), quantity.unit == .percent else {
                return fail(PerfReportCommand.usageError("'--max-increase' must be a percentage such as 15%", spec))
            }
            policy.maxIncreasePercent = quantity.value
        }
        if let text = parsed.values["min-delta"] {
            guard let quantity = BudgetQuantity(parsing: text), quantity.unit == .milliseconds else {
                return fail(PerfReportCommand.usageError("'--min-delta' must be a duration such as 2ms", spec))
            }
            policy.minDelta = quantity
        }
        let verdict: BudgetVerdict
        do {
            let base = try ReportFigures(contentsOf: URL(fileURLWithPath: parsed.positionals[0]))
            let head = try ReportFigures(contentsOf: URL(fileURLWithPath: parsed.positionals[1]))
            verdict = BudgetComparison(policy: policy, failOnImprovement: failOnImprovement)
                .compare(base: base, head: head)
        } catch {
            return fail(PerfReportCommand.invalidInput(error))
        }
        return VerdictOutput.render(
            verdict, command: "compare", format: format, output: output, environment: environment)
    }
}
