// The one error type of diagnostics and reports: what went wrong, on which file, and what to do.
import Glibc

extension Perf {
    /// Why a diagnostic snapshot or a report could not be written or read.
    ///
    /// ``description`` is one line naming the file and the problem, the line `perf-report`
    /// prints on stderr before exiting with status 3:
    ///
    /// ```
    /// cannot read report 'x.json': not a performance report (missing "schema")
    /// ```
    public struct ReportError: Error, Sendable, Equatable, CustomStringConvertible {
        /// What kind of failure this is.
        public enum Code: String, Hashable, Sendable, CustomStringConvertible {
            /// Perf is not installed, or is recording in memory only: there is no data directory.
            case notRecording
            /// The data directory does not exist or is not a directory.
            case missingDirectory
            /// The data directory holds neither a ledger nor a diagnostic payload.
            case emptyDirectory
            /// A file or directory exists but cannot be read (permissions, I/O error).
            case unreadable
            /// The ledger exists but not one line of it is a ledger event.
            case invalidLedger
            /// A report file is not a valid performance report.
            case invalidReport
            /// A report was written by a newer major schema version than this build reads.
            case newerSchema
            /// A file could not be written.
            case writeFailed

            /// The code's name, as `perf-report` prints it.
            public var name: String { rawValue }
            /// The name.
            public var description: String { rawValue }
        }

        /// What kind of failure.
        public let code: Code
        /// The file or directory concerned.
        public let path: String
        /// The problem, in words, including what to do when there is something to do.
        public let message: String

        /// Creates an error.
        public init(_ code: Code, path: String, _ message: String) {
            self.code = code
            self.path = path
            self.message = message
        }

        /// One line: the action, the quoted path, the problem.
        public var description: String {
            switch code {
            case .writeFailed: return "cannot write '\(path)': \(message)"
            case .invalidReport, .newerSchema: return "cannot read report '\(path)': \(message)"
            case .notRecording: return message
            case .missingDirectory, .emptyDirectory: return "cannot read data directory '\(path)': \(message)"
            case .unreadable, .invalidLedger: return "cannot read '\(path)': \(message)"
            }
        }

        /// An errno as words with its number, e.g. `permission denied (errno 13)`.
        static func describe(errno code: Int32) -> String {
            let text = String(cString: strerror(code)).lowercased()
            return "\(text) (errno \(code))"
        }
    }
}
