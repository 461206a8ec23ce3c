// `perf-report check`: a report against a budgets file (and a baseline); the CI gate.
import Foundation
import Perf
import PerfReport

enum CheckCommand {
    static let spec = CommandSpec(
        name: "check", overview: "Check a performance report against budgets and a baseline.",
        arguments: [.init(name: "report", help: "The performance-report.json to check.")],
        options: [
            .value("budgets", valueName: "file", required: true, help: "The budgets file, perf-budgets.json."),
            .value("baseline", valueName: "report", help: "A report to detect regressions against."),
            .repeatable("current", valueName: "report", help: "Another run of the same code."),
            .value(
                "aggregate", valueName: "mode", choices: ReportFigures.Aggregation.allCases.map(\.rawValue),
                help: "How runs combine: median, optimistic or pessimistic (default: median)."),
            .value(
                "format", valueName: "format", choices: VerdictFormat.allCases.map(\.rawValue),
                help: "Output: text, json, github, junit or markdown (default: text, on stderr)."),
            .value("output", short: "o", valueName: "file", help: "Also write the JSON verdict file here."),
            .flag("fail-on-improvement", help: "An improvement fails the check too."),
            .flag("allow-debug", help: "Check absolute time budgets on a debug build."),
        ],
        exitCodes: exitCodes)

    static let exitCodes: [(ExitCode, String)] = [
        (.success, "every budget holds"), (.breach, ExitCode.breach.meaning), (.usage, ExitCode.usage.meaning),
        (.invalidInput, ExitCode.invalidInput.meaning), (.incompleteData, ExitCode.incompleteData.meaning),
    ]

    static func run(_ parsed: CommandSpec.Parsed, environment: [String: String], currentDirectory: String)
        -> CommandResult
    {
        let output = parsed.value("output")
        // The parser demands --budgets and a report.
        guard let budgetsPath = parsed.value("budgets"), let reportPath = parsed.positionals.first else {
            preconditionFailure("check parsed without --budgets or <report>")
        }
        let options = BudgetCheck.Options(
            failOnImprovement: parsed.flag("fail-on-improvement"), allowDebug: parsed.flag("allow-debug"))
        let verdict: BudgetVerdict
        do {
            let budgets = try Budgets(contentsOf: URL(fileURLWithPath: budgetsPath))
            var runs: [ReportFigures] = []
            for path in [reportPath] + parsed.values("current") {
                runs.append(try ReportFigures(contentsOf: URL(fileURLWithPath: path)))
            }
            let baseline = try parsed.value("baseline").map { path throws(Perf.ReportError) in
                try ReportFigures(contentsOf: URL(fileURLWithPath: path))
            }
            let aggregation = parsed.value("aggregate", as: ReportFigures.Aggregation.self) ?? .median
            var current = ReportFigures.aggregate(runs, by: aggregation)
            current.path = reportPath
            var checked = try BudgetCheck(budgets: budgets, options: options).run(
                current: current, baseline: baseline)
            checked.reports = runs.map(\.path)
            verdict = checked
        } catch let error as BudgetsError where error.code == .debugBuild {
            // Nothing is wrong with either file: the budgets ask for timings a debug build
            // cannot give, which is data missing where the budgets demand it (exit 4), not
            // invalid input (exit 3).
            return VerdictOutput.failing(
                CommandResult(stderr: "perf-report: \(error)\n", status: .incompleteData), command: .check,
                output: output)
        } catch {
            return VerdictOutput.failing(PerfReportCommand.invalidInput(error), command: .check, output: output)
        }
        return VerdictOutput.render(
            verdict, command: .check, format: parsed.value("format", as: VerdictFormat.self) ?? .text,
            output: output, environment: environment, currentDirectory: currentDirectory)
    }
}
