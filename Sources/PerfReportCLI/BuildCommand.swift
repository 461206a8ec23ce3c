// `perf-report build`: a data directory to performance-report.json.
import Foundation
import Perf

enum BuildCommand {
    static let spec = CommandSpec(
        name: "build", overview: "Build performance-report.json from a Perf data directory.",
        options: [
            .value("dir", valueName: "dir", help: "The data directory (default: $PERF_DIR)."),
            .value(
                "output", short: "o", valueName: "file", help: "Where to write (default: ./performance-report.json)."),
            .value("cap", valueName: "bytes", help: "The report's size cap in bytes (default: 2097152)."),
        ],
        exitCodes: PerfReportCommand.buildExitCodes)

    static func run(
        _ parsed: CommandSpec.Parsed, environment: [String: String], progress: (String) -> Void
    ) -> CommandResult {
        guard let directory = parsed.value("dir") ?? environment["PERF_DIR"].flatMap({ $0.isEmpty ? nil : $0 }) else {
            return PerfReportCommand.usageError(.other("missing '--dir <dir>' (or set PERF_DIR)"), spec)
        }
        var cap = 2 * 1024 * 1024
        if let text = parsed.value("cap") {
            guard let value = Int(text), value > 0 else {
                return PerfReportCommand.usageError(
                    .badValue("--cap", value: text, expected: "a positive number of bytes"), spec)
            }
            cap = value
        }
        let output = parsed.value("output") ?? ReportBuilder.fileName
        do {
            let builder = ReportBuilder(directory: URL(fileURLWithPath: directory), capBytes: cap)
            try builder.write(to: URL(fileURLWithPath: output)) { progress("perf-report: " + $0) }
        } catch {
            return PerfReportCommand.invalidInput(error)
        }
        return CommandResult(stdout: output + "\n")
    }
}
