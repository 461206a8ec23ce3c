// Entry point of `perf-report`: all logic lives in PerfReportCLI.
import Foundation
import PerfReportCLI

let result = PerfReportCommand.run(Array(CommandLine.arguments.dropFirst()))
FileHandle.standardOutput.write(Data(result.stdout.utf8))
FileHandle.standardError.write(Data(result.stderr.utf8))
exit(result.status)
