// Help text of the command and every subcommand, in argument-parser's layout, and usage errors.
import Testing

@testable import PerfReportCLI

@Suite struct HelpTests {
    @Test func helpListsSubcommandsAndExitCodesOnStdout() {
        let result = PerfReportCommand.run(["--help"])
        #expect(result.status == ExitCode.success)
        #expect(result.stdout.hasPrefix("OVERVIEW: "))
        #expect(result.stdout.contains("USAGE: perf-report"))
        #expect(result.stdout.contains("EXIT CODES:"))
        for code in 0...4 { #expect(result.stdout.contains("  \(code)  ")) }
        for subcommand in ["demo", "build", "summary", "check", "compare", "export", "attach"] {
            #expect(result.stdout.contains("  \(subcommand) "))
        }
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

    @Test func buildHelpIsExactlyTheArgumentParserLayout() {
        let expected = """
            OVERVIEW: Build performance-report.json from a Perf data directory.

            USAGE: perf-report build [--dir <dir>] [-o <file>] [--cap <bytes>]

            OPTIONS:
              --dir <dir>             The data directory (default: $PERF_DIR).
              -o, --output <file>     Where to write (default: ./performance-report.json).
              --cap <bytes>           The report's size cap in bytes (default: 2097152).
              -h, --help              Show help information.

            EXIT CODES:
              0  success
              2  usage error
              3  unreadable or invalid input (the message names the file and the problem)

            """
        #expect(PerfReportCommand.run(["build", "--help"]).stdout == expected)
        #expect(PerfReportCommand.run(["build", "-h"]).stdout == expected)
    }

    @Test(arguments: ["demo", "build", "summary", "export"])
    func everySubcommandHasHelp(subcommand: String) {
        let result = PerfReportCommand.run([subcommand, "--help"])
        #expect(result.status == ExitCode.success)
        #expect(result.stderr.isEmpty)
        for heading in ["OVERVIEW: ", "USAGE: perf-report \(subcommand)", "OPTIONS:", "  -h, --help", "EXIT CODES:"] {
            #expect(result.stdout.contains(heading))
        }
        #expect(result.stdout.contains("ARGUMENTS:\n  <report>") == ["summary", "export"].contains(subcommand))
    }

    @Test(arguments: [
        (["build", "--bogus"], "Error: unknown option '--bogus'"),
        (["build", "--dir"], "Error: missing value for '--dir <dir>'"),
        (["build", "--dir", "a", "--dir", "b"], "Error: '--dir' given more than once"),
        (["build", "--cap", "-5", "--dir", "x"], "Error: '--cap' must be a positive number of bytes, not '-5'"),
        (["summary"], "Error: missing expected argument '<report>'"),
        (["summary", "a.json", "b.json"], "Error: unexpected argument 'b.json'"),
        (["summary", "a.json", "--format", "xml"], "Error: '--format' must be text or json, not 'xml'"),
    ])
    func subcommandUsageErrors(arguments: [String], message: String) {
        let result = PerfReportCommand.run(arguments, environment: [:], progress: { _ in })
        #expect(result.status == ExitCode.usage)
        #expect(result.stderr.hasPrefix(message + "\nUsage: perf-report \(arguments[0])"))
        #expect(result.stdout.isEmpty)
    }

    @Test func buildWithoutADirectoryOrPerfDirIsAUsageError() {
        let result = PerfReportCommand.run(["build"], environment: [:], progress: { _ in })
        #expect(result.status == ExitCode.usage)
        #expect(result.stderr.hasPrefix("Error: missing '--dir <dir>' (or set PERF_DIR)"))
    }
}
