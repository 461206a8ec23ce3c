// Typed ledger errors that name the file, the errno and what the operator should do.
import Glibc

/// A ledger operation that failed, with the path, the errno and a remedy.
///
/// `description` reads as one sentence an operator can act on, e.g. `cannot open ledger at
/// /var/lib/x/perf-events.jsonl: Permission denied (errno 13); set PERF_DIR to a writable
/// directory`.
public struct LedgerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of operation failed; the raw value is a stable identifier, e.g. "open".
    public enum Code: String, Hashable, Sendable, CustomStringConvertible {
        /// Opening or creating the ledger file failed.
        case open
        /// `write(2)` failed (disk full, quota, I/O error).
        case write
        /// `write(2)` wrote part of a line; the line is counted as dropped.
        case shortWrite
        /// Renaming the full file to `perf-events.jsonl.prev` failed.
        case rotate
        /// The encoded line is larger than the file cap.
        case lineTooLong
        /// Reading a ledger file failed.
        case read
        /// The writer was closed.
        case closed
        /// The identifier.
        public var description: String { rawValue }
    }

    /// What failed.
    public var code: Code
    /// A sentence describing the failure and the remedy.
    public var message: String
    /// The errno the kernel returned, if a syscall failed.
    public var errno: Int32?
    /// The file the operation was on.
    public var path: String

    /// Creates an error; prefer the factories, which phrase the remedy.
    public init(code: Code, message: String, errno: Int32?, path: String) {
        self.code = code
        self.message = message
        self.errno = errno
        self.path = path
    }

    /// The message with the errno spelled out.
    public var description: String { message }

    static func syscall(_ code: Code, verb: String, path: String, errno: Int32, remedy: String) -> LedgerError {
        let reason = String(cString: strerror(errno))
        return LedgerError(
            code: code, message: "cannot \(verb) ledger at \(path): \(reason) (errno \(errno)); \(remedy)",
            errno: errno, path: path)
    }

    static func open(path: String, errno: Int32) -> LedgerError {
        syscall(.open, verb: "open", path: path, errno: errno, remedy: "set PERF_DIR to a writable directory")
    }

    static func write(path: String, errno: Int32) -> LedgerError {
        syscall(
            .write, verb: "write", path: path, errno: errno,
            remedy: "free disk space or set PERF_DIR to a writable directory; the line is counted as dropped")
    }

    static func shortWrite(path: String, wrote: Int, of total: Int) -> LedgerError {
        LedgerError(
            code: .shortWrite,
            message: "cannot write ledger at \(path): wrote \(wrote) of \(total) bytes (disk full?); "
                + "free disk space; the line is counted as dropped",
            errno: nil, path: path)
    }

    static func rotate(path: String, errno: Int32) -> LedgerError {
        syscall(.rotate, verb: "rotate", path: path, errno: errno, remedy: "check the directory is writable")
    }

    static func lineTooLong(path: String, bytes: Int, cap: Int) -> LedgerError {
        LedgerError(
            code: .lineTooLong,
            message: "cannot write ledger at \(path): a \(bytes)-byte line exceeds the \(cap)-byte cap; "
                + "raise ledgerCapBytes; the line is counted as dropped",
            errno: nil, path: path)
    }

    static func read(path: String, errno: Int32) -> LedgerError {
        syscall(.read, verb: "read", path: path, errno: errno, remedy: "check the file's permissions")
    }

    static func closed(path: String) -> LedgerError {
        LedgerError(
            code: .closed, message: "cannot write ledger at \(path): the writer was closed; create a new writer",
            errno: nil, path: path)
    }
}
