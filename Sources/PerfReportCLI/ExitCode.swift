// The exit codes of the `perf-report` contract, as one type every command returns.
import PerfReport

/// The exit codes of the contract (`PerfReport.docc/CommandLine.md`, Exit codes).
public enum ExitCode: Int32, Sendable, CaseIterable {
    /// Success; checks passed.
    case success = 0
    /// A budget breached or a regression found.
    case breach = 1
    /// The command line is wrong.
    case usage = 2
    /// An input is unreadable or invalid (the message names the file and the problem).
    case invalidInput = 3
    /// Incomplete data where the budgets demand it.
    case incompleteData = 4

    /// What the code means, as `perf-report --help` lists it.
    public var meaning: String {
        switch self {
        case .success: return "success"
        case .breach: return "a budget breached or a regression found"
        case .usage: return "usage error"
        case .invalidInput: return "unreadable or invalid input (the message names the file and the problem)"
        case .incompleteData: return "incomplete data where the budgets demand it"
        }
    }

    /// The exit code a verdict's outcome stands for: a warning still passes.
    public init(_ outcome: BudgetVerdict.Outcome) {
        switch outcome {
        case .pass, .warn: self = .success
        case .fail: self = .breach
        case .incomplete: self = .incompleteData
        }
    }
}
