// The command's top-level help and usage errors.
import Testing
@testable import PerfReportCLI

@Suite struct HelpTests {
    @Test func helpListsExitCodesOnStdout() {
        let result = PerfReportCommand.run(["--help"])
        #expect(result.status == ExitCode.success)
        #expect(result.stdout.hasPrefix("OVERVIEW: "))
        #expect(result.stdout.contains("USAGE: perf-report"))
        #expect(result.stdout.contains("EXIT CODES:"))
        #expect(result.stderr.isEmpty)
    }

    @Test(arguments: [[], ["frobnicate"]])
    func usageErrorsExitTwoWithUsageOnStderr(arguments: [String]) {
        let result = PerfReportCommand.run(arguments)
        #expect(result.status == ExitCode.usage)
        #expect(result.stderr.hasPrefix("Error: "))
        #expect(result.stderr.contains("USAGE: perf-report"))
        #expect(result.stdout.isEmpty)
    }
}
