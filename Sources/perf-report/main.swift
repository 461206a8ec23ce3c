// Entry point of `perf-report`: all logic lives in PerfReportCLI.
import Foundation
import PerfReportCLI

let result = PerfReportCommand.run(
    Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment,
    progress: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) })
FileHandle.standardOutput.write(Data(result.stdout.utf8))
FileHandle.standardError.write(Data(result.stderr.utf8))
exit(result.status.rawValue)
