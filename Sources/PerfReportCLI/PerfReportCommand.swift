// Argument parsing and dispatch for `perf-report`; returns output instead of printing so tests
// can drive every path without spawning a process.
import Foundation

/// What one run of `perf-report` produced.
public struct CommandResult: Sendable, Equatable {
    /// Data for stdout.
    public var stdout: String
    /// Diagnostics for stderr.
    public var stderr: String
    /// The process exit status (see ``ExitCode``).
    public var status: Int32

    /// Creates a result.
    public init(stdout: String = "", stderr: String = "", status: Int32 = ExitCode.success) {
        self.stdout = stdout
        self.stderr = stderr
        self.status = status
    }
}

/// The exit codes of the contract.
public enum ExitCode {
    /// Success; checks passed.
    public static let success: Int32 = 0
    /// A budget breached or a regression found.
    public static let breach: Int32 = 1
    /// The command line is wrong.
    public static let usage: Int32 = 2
    /// An input is unreadable or invalid (the message names the file and the problem).
    public static let invalidInput: Int32 = 3
    /// Incomplete data where the budgets demand it.
    public static let incompleteData: Int32 = 4
}

/// The `perf-report` command.
public enum PerfReportCommand {
    static let overview = """
        OVERVIEW: Build and summarise Perf performance reports.

        USAGE: perf-report <subcommand>

        OPTIONS:
          -h, --help              Show help information.

        SUBCOMMANDS:
          demo                    Run an instrumented sample workload and report on it.
          build                   Build performance-report.json from a data directory.
          summary                 Print a readable summary of a performance report.
          check                   Check a performance report against budgets and a baseline.
          compare                 Compare two performance reports span by span.
          export                  Export a report for trace viewers, OpenTelemetry or Prometheus.

          See 'perf-report <subcommand> --help' for detailed help.

        EXIT CODES:
          0  success
          1  a budget breached or a regression found
          2  usage error
          3  unreadable or invalid input (the message names the file and the problem)
          4  incomplete data where the budgets demand it

        """

    /// Runs the command with the arguments after the program name, reading `PERF_DIR` from the
    /// process environment.
    public static func run(_ arguments: [String]) -> CommandResult {
        run(arguments, environment: ProcessInfo.processInfo.environment, progress: { _ in })
    }

    /// Runs the command with an explicit environment; `progress` receives progress lines for
    /// long work (the executable writes them to stderr as they come).
    public static func run(
        _ arguments: [String], environment: [String: String], progress: (String) -> Void
    ) -> CommandResult {
        guard let subcommand = arguments.first else {
            return CommandResult(stderr: "Error: missing subcommand\n\n" + overview, status: ExitCode.usage)
        }
        let rest = Array(arguments.dropFirst())
        switch subcommand {
        case "-h", "--help", "help":
            return CommandResult(stdout: overview)
        case "build":
            return execute(BuildCommand.spec, rest) {
                BuildCommand.run($0, environment: environment, progress: progress)
            }
        case "summary":
            return execute(SummaryCommand.spec, rest, SummaryCommand.run)
        case "check":
            return CheckCommand.run(rest, environment: environment)
        case "compare":
            return CompareCommand.run(rest, environment: environment)
        case "export":
            return execute(ExportCommand.spec, rest, ExportCommand.run)
        case "demo":
            return execute(DemoCommand.spec, rest) { DemoCommand.run($0, progress: progress) }
        default:
            return CommandResult(
                stderr: "Error: unknown subcommand '\(subcommand)'\n\n" + overview, status: ExitCode.usage)
        }
    }

    /// Parses, answers `--help`, turns usage errors into `Error: …` plus usage (status 2).
    static func execute(
        _ spec: CommandSpec, _ arguments: [String], _ body: (CommandSpec.Parsed) -> CommandResult
    ) -> CommandResult {
        switch spec.parse(arguments) {
        case .failure(let error):
            return usageError(error.message, spec)
        case .success(let parsed):
            return parsed.wantsHelp ? CommandResult(stdout: spec.help) : body(parsed)
        }
    }

    static func usageError(_ message: String, _ spec: CommandSpec) -> CommandResult {
        CommandResult(
            stderr:
                "Error: \(message)\nUsage: \(spec.usage)\n  See 'perf-report \(spec.name) --help' for more information.\n",
            status: ExitCode.usage)
    }

    /// One line on stderr naming the file and the problem, status 3.
    static func invalidInput(_ error: any Error) -> CommandResult {
        CommandResult(stderr: "perf-report: \(error)\n", status: ExitCode.invalidInput)
    }

    static let buildExitCodes: [(Int32, String)] = [
        (ExitCode.success, "success"), (ExitCode.usage, "usage error"),
        (ExitCode.invalidInput, "unreadable or invalid input (the message names the file and the problem)"),
    ]
}
