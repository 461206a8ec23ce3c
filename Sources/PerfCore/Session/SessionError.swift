// The typed error of session storage: what failed, where, and what to do about it.
/// Why the session store could not do what was asked.
///
/// Only ``SessionStore/start(_:)`` and ``SessionStore/acknowledge(_:)`` throw: once a session
/// is live, journal failures are counted (``LiveSession/failureCount``), never thrown, so the
/// host program never fails because of Perf.
public struct SessionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Code: String, Hashable, Sendable, CustomStringConvertible {
        /// The sessions directory or a lock file could not be created or opened.
        case storage
        /// A session with this id is already live (its lock is held).
        case alreadyLive
        /// The session id cannot name a directory.
        case invalidID
        /// The session journal could not be created.
        case journal
        /// An ingested journal could not be deleted.
        case cleanup

        /// The code's name, e.g. `alreadyLive`.
        public var description: String { rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A sentence naming the path, the cause and what to do.
    public var message: String

    /// Creates an error.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// `<code>: <message>`, for logs.
    public var description: String { "\(code): \(message)" }
}
