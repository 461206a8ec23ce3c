// `perf-report summary`: a report as readable tables, or as JSON.
import Foundation
import Perf
import PerfReport

enum SummaryCommand {
    static let spec = CommandSpec(
        name: "summary", overview: "Print a readable summary of a performance report.",
        arguments: [.init(name: "report", help: "The performance-report.json to read.")],
        options: [.init(long: "format", valueName: "format", help: "Output format: text or json (default: text).")],
        exitCodes: PerfReportCommand.buildExitCodes)

    static func run(_ parsed: CommandSpec.Parsed) -> CommandResult {
        let format = parsed.values["format"] ?? "text"
        guard format == "text" || format == "json" else {
            return PerfReportCommand.usageError("'--format' must be text or json, not '\(format)'", spec)
        }
        let summary: ReportSummary
        do {
            summary = try ReportSummary(contentsOf: URL(fileURLWithPath: parsed.positionals[0]))
        } catch {
            return PerfReportCommand.invalidInput(error)
        }
        return CommandResult(stdout: format == "json" ? summary.json : summary.text)
    }
}
