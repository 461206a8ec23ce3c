// The one error type of budget checks: a budgets file that cannot be used, or a check that must
// be refused; always names the file (and the rule) and says what to do.
import Perf

/// Why a budgets file could not be used, or why a check was refused.
///
/// ``description`` is the one line `perf-report check` prints on stderr before exiting with
/// status 3 (status 4 for ``Code/debugBuild``: valid files, but data the budgets demand is
/// missing):
///
/// ```
/// invalid budgets file 'perf-budgets.json': spans[1] ("api.*"): unknown metric "p42"; use one of count, p50, …
/// ```
public struct BudgetsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Code: String, Hashable, Sendable, CustomStringConvertible {
        /// The budgets file is unreadable, not JSON, or does not follow the format.
        case invalidBudgets
        /// Absolute time budgets were asked of a report from a debug build.
        case debugBuild

        /// The code's name, as `perf-report` prints it.
        public var name: String { rawValue }
        /// The name.
        public var description: String { rawValue }
    }

    /// What kind of failure.
    public let code: Code
    /// The budgets file (or, for ``Code/debugBuild``, the report) concerned.
    public let path: String
    /// The rule at fault, e.g. `spans[1] ("api.*")`, when one is.
    public let rule: String?
    /// The problem, in words, including what to do.
    public let message: String

    /// Creates an error.
    public init(_ code: Code, path: String, rule: String? = nil, _ message: String) {
        self.code = code
        self.path = path
        self.rule = rule
        self.message = message
    }

    /// One line: the file, the rule, the problem.
    public var description: String {
        switch code {
        case .debugBuild: return "refusing to check '\(path)': \(message)"
        case .invalidBudgets: return "invalid budgets file '\(path)': " + (rule.map { $0 + ": " } ?? "") + message
        }
    }
}
