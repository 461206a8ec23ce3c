// Argument parsing and dispatch for `perf-report`; returns output instead of printing so tests
// can drive every path without spawning a process.

/// What one run of `perf-report` produced.
public struct CommandResult: Sendable, Equatable {
    /// Data for stdout.
    public var stdout: String
    /// Diagnostics for stderr.
    public var stderr: String
    /// The process exit status (see ``ExitCode``).
    public var status: Int32

    public init(stdout: String = "", stderr: String = "", status: Int32 = ExitCode.success) {
        self.stdout = stdout
        self.stderr = stderr
        self.status = status
    }
}

/// The exit codes of the contract.
public enum ExitCode {
    public static let success: Int32 = 0
    public static let breach: Int32 = 1
    public static let usage: Int32 = 2
    public static let invalidInput: Int32 = 3
    public static let incompleteData: Int32 = 4
}

/// The `perf-report` command.
public enum PerfReportCommand {
    static let overview = """
        OVERVIEW: Build, summarise and check Perf performance reports.

        USAGE: perf-report <subcommand>

        OPTIONS:
          -h, --help              Show help information.

        SUBCOMMANDS:
          demo                    Run an instrumented sample workload and report on it.

        EXIT CODES:
          0 pass; 1 budget breached or regression; 2 usage error; 3 unreadable or invalid input;
          4 incomplete data where the budgets demand it.

        """

    /// Runs the command with the arguments after the program name.
    public static func run(_ arguments: [String]) -> CommandResult {
        guard let subcommand = arguments.first else {
            return CommandResult(stderr: "Error: missing subcommand\n\n" + overview, status: ExitCode.usage)
        }
        switch subcommand {
        case "-h", "--help", "help":
            return CommandResult(stdout: overview)
        case "demo":
            return CommandResult(
                stderr: "perf-report demo: not yet implemented (issue #6 builds the report and the demo)\n",
                status: ExitCode.usage)
        default:
            return CommandResult(
                stderr: "Error: unknown subcommand '\(subcommand)'\n\n" + overview, status: ExitCode.usage)
        }
    }
}
