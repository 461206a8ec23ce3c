// `perf-report summary`: a report as readable tables, or as JSON.
import Foundation
import Perf
import PerfReport

enum SummaryCommand {
    /// What `--format` chooses.
    enum Format: String, CaseIterable {
        case text, json
    }

    static let spec = CommandSpec(
        name: "summary", overview: "Print a readable summary of a performance report.",
        arguments: [.init(name: "report", help: "The performance-report.json to read.")],
        options: [
            .value(
                "format", valueName: "format", choices: Format.allCases.map(\.rawValue),
                help: "Output format: text or json (default: text).")
        ],
        exitCodes: PerfReportCommand.buildExitCodes)

    static func run(_ parsed: CommandSpec.Parsed) -> CommandResult {
        let format = parsed.value("format", as: Format.self) ?? .text
        let summary: ReportSummary
        do {
            summary = try ReportSummary(contentsOf: URL(fileURLWithPath: parsed.positionals[0]))
        } catch {
            return PerfReportCommand.invalidInput(error)
        }
        return CommandResult(stdout: format == .json ? summary.json : summary.text)
    }
}
