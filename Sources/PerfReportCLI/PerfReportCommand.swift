// Argument parsing and dispatch for `perf-report`; returns output instead of printing so tests
// can drive every path without spawning a process.
import Foundation

/// What one run of `perf-report` produced.
public struct CommandResult: Sendable, Equatable {
    /// Data for stdout.
    public var stdout: String
    /// Diagnostics for stderr.
    public var stderr: String
    /// The process exit status.
    public var status: ExitCode

    /// Creates a result.
    public init(stdout: String = "", stderr: String = "", status: ExitCode = .success) {
        self.stdout = stdout
        self.stderr = stderr
        self.status = status
    }
}

/// The `perf-report` command.
public enum PerfReportCommand {
    /// The subcommands, in the order help lists them.
    enum Subcommand: String, CaseIterable {
        case demo, build, summary, check, compare, export, attach

        /// The one line `perf-report --help` shows for it.
        var abstract: String {
            switch self {
            case .demo: return "Run an instrumented sample workload and report on it."
            case .build: return "Build performance-report.json from a data directory."
            case .summary: return "Print a readable summary of a performance report."
            case .check: return "Check a performance report against budgets and a baseline."
            case .compare: return "Compare two performance reports span by span."
            case .export: return "Export a report for trace viewers, OpenTelemetry or Prometheus."
            case .attach: return "Record the probes of a running process into a Chrome trace."
            }
        }

        var spec: CommandSpec {
            switch self {
            case .demo: return DemoCommand.spec
            case .build: return BuildCommand.spec
            case .summary: return SummaryCommand.spec
            case .check: return CheckCommand.spec
            case .compare: return CompareCommand.spec
            case .export: return ExportCommand.spec
            case .attach: return AttachCommand.spec
            }
        }
    }

    static var overview: String {
        var text = """
            OVERVIEW: Build and summarise Perf performance reports.

            USAGE: perf-report <subcommand>

            OPTIONS:
              -h, --help              Show help information.

            SUBCOMMANDS:

            """
        for subcommand in Subcommand.allCases { text += CommandSpec.helpLine(subcommand.rawValue, subcommand.abstract) }
        text += "\n  See 'perf-report <subcommand> --help' for detailed help.\n\nEXIT CODES:\n"
        for code in ExitCode.allCases { text += "  \(code.rawValue)  \(code.meaning)\n" }
        return text
    }

    /// Runs the command with the arguments after the program name, reading `PERF_DIR` from the
    /// process environment.
    public static func run(_ arguments: [String]) -> CommandResult {
        run(arguments, environment: ProcessInfo.processInfo.environment, progress: { _ in })
    }

    /// Runs the command with an explicit environment and current directory (the checkout that
    /// `--format github` resolves call sites in without `GITHUB_WORKSPACE`); `progress` receives
    /// progress lines for long work (the executable writes them to stderr as they come).
    public static func run(
        _ arguments: [String], environment: [String: String],
        currentDirectory: String = FileManager.default.currentDirectoryPath, progress: (String) -> Void
    ) -> CommandResult {
        guard let name = arguments.first else {
            return CommandResult(stderr: "Error: missing subcommand\n\n" + overview, status: .usage)
        }
        if ["-h", "--help", "help"].contains(name) { return CommandResult(stdout: overview) }
        guard let subcommand = Subcommand(rawValue: name) else {
            return CommandResult(stderr: "Error: unknown subcommand '\(name)'\n\n" + overview, status: .usage)
        }
        let rest = Array(arguments.dropFirst())
        switch subcommand {
        case .build:
            return execute(subcommand.spec, rest) {
                BuildCommand.run($0, environment: environment, progress: progress)
            }
        case .summary:
            return execute(subcommand.spec, rest, SummaryCommand.run)
        case .check:
            return execute(subcommand.spec, rest, verdictFor: .check) {
                CheckCommand.run($0, environment: environment, currentDirectory: currentDirectory)
            }
        case .compare:
            return execute(subcommand.spec, rest, verdictFor: .compare) {
                CompareCommand.run($0, environment: environment, currentDirectory: currentDirectory)
            }
        case .export:
            return execute(subcommand.spec, rest, ExportCommand.run)
        case .demo:
            return execute(subcommand.spec, rest) { DemoCommand.run($0, progress: progress) }
        case .attach:
            return execute(subcommand.spec, rest) {
                AttachCommand.run($0, environment: environment, progress: progress)
            }
        }
    }

    /// Parses, answers `--help`, turns usage errors into `Error: …` plus usage (status 2); for
    /// a command with a verdict file (`verdictFor`), the error verdict goes to its `-o` too.
    static func execute(
        _ spec: CommandSpec, _ arguments: [String], verdictFor command: Subcommand? = nil,
        _ body: (CommandSpec.Parsed) -> CommandResult
    ) -> CommandResult {
        switch spec.parse(arguments) {
        case .failure(let error):
            let result = usageError(error, spec)
            guard let command else { return result }
            return VerdictOutput.failing(result, command: command, output: error.partial?.value("output"))
        case .success(let parsed):
            return parsed.wantsHelp ? CommandResult(stdout: spec.help) : body(parsed)
        }
    }

    static func usageError(_ error: UsageError, _ spec: CommandSpec) -> CommandResult {
        CommandResult(
            stderr:
                "Error: \(error.message)\nUsage: \(spec.usage)\n  See 'perf-report \(spec.name) --help' for more information.\n",
            status: .usage)
    }

    static func usageError(_ problem: UsageError.Problem, _ spec: CommandSpec) -> CommandResult {
        usageError(UsageError(problem), spec)
    }

    /// One line on stderr naming the file and the problem, status 3.
    static func invalidInput(_ error: any Error) -> CommandResult {
        CommandResult(stderr: "perf-report: \(error)\n", status: .invalidInput)
    }

    static let buildExitCodes: [(ExitCode, String)] = [
        (.success, ExitCode.success.meaning), (.usage, ExitCode.usage.meaning),
        (.invalidInput, ExitCode.invalidInput.meaning),
    ]
}
