// `perf-report build`: a data directory to performance-report.json.
import Foundation
import Perf

enum BuildCommand {
    static let spec = CommandSpec(
        name: "build", overview: "Build performance-report.json from a Perf data directory.",
        options: [
            .init(long: "dir", valueName: "dir", help: "The data directory (default: $PERF_DIR)."),
            .init(
                short: "o", long: "output", valueName: "file",
                help: "Where to write (default: ./performance-report.json)."),
            .init(long: "cap", valueName: "bytes", help: "The report's size cap in bytes (default: 2097152)."),
        ],
        exitCodes: PerfReportCommand.buildExitCodes)

    static func run(
        _ parsed: CommandSpec.Parsed, environment: [String: String], progress: (String) -> Void
    ) -> CommandResult {
        guard let directory = parsed.values["dir"] ?? environment["PERF_DIR"].flatMap({ $0.isEmpty ? nil : $0 }) else {
            return PerfReportCommand.usageError("missing '--dir <dir>' (or set PERF_DIR)", spec)
        }
        var cap = 2 * 1024 * 1024
        if let text = parsed.values["cap"] {
            guard let value = Int(text), value > 0 else {
                return PerfReportCommand.usageError("'--cap' needs a positive number of bytes, not '\(text)'", spec)
            }
            cap = value
        }
        let output = parsed.values["output"] ?? Perf.ReportBuilder.fileName
        do {
            let builder = Perf.ReportBuilder(directory: URL(fileURLWithPath: directory), capBytes: cap)
            try builder.write(to: URL(fileURLWithPath: output)) { progress("perf-report: " + $0) }
        } catch {
            return PerfReportCommand.invalidInput(error)
        }
        return CommandResult(stdout: output + "\n")
    }
}
