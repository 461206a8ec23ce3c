// The one error type JournalKit throws: what failed, on which path, and what to do about it.
import Glibc

/// An error from a journal operation.
///
/// Every error names the operation's ``code``, the system `errno` when a syscall failed, the
/// file or directory involved, and a ``message`` that ends with what the caller can do.
///
/// ```swift
/// do { try journal.append(data) } catch let error as JournalError where error.code == .noSpace {
///     // free disk space; the journal starts a fresh segment on the next append
/// }
/// ```
public struct JournalError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is. A growable set of named values.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// A stable identifier, e.g. `"shortWrite"`.
        public let rawValue: String

        init(_ rawValue: String) { self.rawValue = rawValue }

        /// The journal directory could not be created or opened.
        public static let directoryUnavailable = Code("directoryUnavailable")
        /// A segment file could not be created, opened or read.
        public static let segmentUnavailable = Code("segmentUnavailable")
        /// `write(2)` wrote only part of an entry; the segment is poisoned and the next append
        /// starts a new one.
        public static let shortWrite = Code("shortWrite")
        /// The device is full (`ENOSPC`/`EDQUOT`).
        public static let noSpace = Code("noSpace")
        /// `write(2)` failed for another reason.
        public static let writeFailed = Code("writeFailed")
        /// `fdatasync(2)` or `fsync(2)` failed: the entry may not survive power loss.
        public static let syncFailed = Code("syncFailed")
        /// The entry is empty or larger than half the byte budget allows.
        public static let invalidEntry = Code("invalidEntry")
        /// The configuration cannot work (for example a byte budget too small).
        public static let invalidConfiguration = Code("invalidConfiguration")
        /// The journal was closed.
        public static let closed = Code("closed")

        /// The identifier, e.g. `shortWrite`.
        public var description: String { rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A sentence describing the failure and what to do.
    public var message: String
    /// The `errno` of the failed syscall, when one failed.
    public var errno: Int32?
    /// The file or directory involved, when there is one.
    public var path: String?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: What failed and what to do.
    ///   - errno: The `errno` of the failed syscall.
    ///   - path: The file or directory involved.
    public init(code: Code, message: String, errno: Int32? = nil, path: String? = nil) {
        self.code = code
        self.message = message
        self.errno = errno
        self.path = path
    }

    /// The code, the message, the `errno` with its meaning, and the path, on one line.
    public var description: String {
        var text = "JournalError.\(code): \(message)"
        if let errno {
            text += " (errno \(errno): \(String(cString: strerror(errno))))"
        }
        if let path { text += " [\(path)]" }
        return text
    }
}

extension JournalError {
    static func directory(_ path: String, errno: Int32) -> JournalError {
        JournalError(
            code: .directoryUnavailable,
            message: "cannot create or open the journal directory; check that it is writable by this user "
                + "or choose another directory",
            errno: errno, path: path)
    }

    static func segment(_ path: String, errno: Int32, action: String) -> JournalError {
        let isFull = errno == ENOSPC || errno == EDQUOT
        return JournalError(
            code: isFull ? .noSpace : .segmentUnavailable,
            message: "cannot \(action) a journal segment; "
                + (isFull ? "free disk space and append again" : "check the directory's permissions and free inodes"),
            errno: errno, path: path)
    }

    static func write(_ path: String, errno: Int32) -> JournalError {
        let isFull = errno == ENOSPC || errno == EDQUOT
        return JournalError(
            code: isFull ? .noSpace : .writeFailed,
            message: isFull
                ? "the device is full; free disk space: the next append starts a fresh segment"
                : "write(2) failed; the next append starts a fresh segment, retry it",
            errno: errno, path: path)
    }

    static func shortWrite(_ path: String, written: Int, expected: Int) -> JournalError {
        JournalError(
            code: .shortWrite,
            message: "write(2) stored \(written) of \(expected) bytes (device full?); the entry is lost and the "
                + "segment closed: free disk space, the next append starts a fresh segment",
            path: path)
    }

    static func sync(_ path: String, errno: Int32) -> JournalError {
        JournalError(
            code: .syncFailed,
            message: "the entry is in the page cache but could not be flushed to disk; it survives a crash of "
                + "this process but maybe not power loss: check the device's health",
            errno: errno, path: path)
    }
}
