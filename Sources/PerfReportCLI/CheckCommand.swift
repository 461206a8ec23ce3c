// `perf-report check`: a report against a budgets file (and a baseline); the CI gate.
import Foundation
import Perf
import PerfReport

enum CheckCommand {
    static let flags: Set<String> = ["--fail-on-improvement", "--allow-debug"]

    static let spec = CommandSpec(
        name: "check", overview: "Check a performance report against budgets and a baseline.",
        arguments: [.init(name: "report", help: "The performance-report.json to check.")],
        options: [
            .init(long: "budgets", valueName: "file", help: "The budgets file (perf-budgets.json); required."),
            .init(long: "baseline", valueName: "report", help: "A report to detect regressions against."),
            .init(long: "current", valueName: "report", help: "Another run of the same code (repeatable)."),
            .init(
                long: "aggregate", valueName: "mode",
                help: "How runs combine: median, optimistic or pessimistic (default: median)."),
            .init(
                long: "format", valueName: "format",
                help: "Output: text, json, github, junit or markdown (default: text, on stderr)."),
            .init(short: "o", long: "output", valueName: "file", help: "Also write the JSON verdict file here."),
        ],
        exitCodes: exitCodes)

    static let exitCodes: [(Int32, String)] = [
        (ExitCode.success, "every budget holds"), (ExitCode.breach, "a budget breached or a regression found"),
        (ExitCode.usage, "usage error"),
        (ExitCode.invalidInput, "unreadable or invalid input (the message names the file and the problem)"),
        (ExitCode.incompleteData, "incomplete data where the budgets demand it"),
    ]

    static var help: String {
        spec.help.replacingOccurrences(
            of: "  -h, --help",
            with: CommandSpec.helpLine("--fail-on-improvement", "An improvement fails the check too.")
                + CommandSpec.helpLine("--allow-debug", "Check absolute time budgets on a debug build.")
                + "  -h, --help")
    }

    static func run(_ arguments: [String], environment: [String: String]) -> CommandResult {
        let output = VerdictOutput.outputPath(in: arguments)
        func fail(_ result: CommandResult) -> CommandResult {
            VerdictOutput.failing(result, command: "check", output: output)
        }
        let extracted: VerdictOutput.Extracted
        switch VerdictOutput.extract(arguments, flags: flags, repeatable: "current") {
        case .failure(let error): return fail(PerfReportCommand.usageError(error.message, spec))
        case .success(let value): extracted = value
        }
        let parsed: CommandSpec.Parsed
        switch spec.parse(extracted.rest) {
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
        guard let aggregation = ReportFigures.Aggregation(rawValue: parsed.values["aggregate"] ?? "median") else {
            return fail(PerfReportCommand.usageError("'--aggregate' must be median, optimistic or pessimistic", spec))
        }
        guard let budgetsPath = parsed.values["budgets"] else {
            return fail(PerfReportCommand.usageError("missing '--budgets <file>'", spec))
        }
        let options = BudgetCheck.Options(
            failOnImprovement: extracted.flags.contains("--fail-on-improvement"),
            allowDebug: extracted.flags.contains("--allow-debug"))
        let verdict: BudgetVerdict
        do {
            let budgets = try Budgets(contentsOf: URL(fileURLWithPath: budgetsPath))
            var runs: [ReportFigures] = []
            for path in [parsed.positionals[0]] + extracted.repeated {
                runs.append(try ReportFigures(contentsOf: URL(fileURLWithPath: path)))
            }
            let baseline = try parsed.values["baseline"].map { path throws(Perf.ReportError) in
                try ReportFigures(contentsOf: URL(fileURLWithPath: path))
            }
            var current = ReportFigures.aggregate(runs, by: aggregation)
            current.path = parsed.positionals[0]
            var checked = try BudgetCheck(budgets: budgets, options: options).run(
                current: current, baseline: baseline)
            checked.reports = runs.map(\.path)
            verdict = checked
        } catch {
            return fail(PerfReportCommand.invalidInput(error))
        }
        return VerdictOutput.render(
            verdict, command: "check", format: format, output: output, environment: environment)
    }
}
