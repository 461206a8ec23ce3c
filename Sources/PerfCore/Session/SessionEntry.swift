// What a session journal holds: one value per journalled event, before encoding.
/// A long-lived span as journalled when it began.
public struct JournalledSpan: Codable, Sendable, Equatable {
    /// The span's id, unique within its session.
    public var id: UInt64
    /// The span's name, e.g. `"feed.openThread"`.
    public var name: String
    /// The key of a keyed span, if any.
    public var key: String?
    /// The call site, e.g. `"MyService/API.swift:88"`.
    public var site: String
    /// The budget, if the span has one.
    public var budgetNanos: UInt64?
    /// The lifetime, e.g. `"bounded"` or `"indefinite"`.
    public var lifetime: String
    /// When it began, in nanoseconds since the Unix epoch.
    public var startWallNanos: UInt64

    /// Creates a journalled span.
    public init(
        id: UInt64, name: String, key: String?, site: String, budgetNanos: UInt64?, lifetime: String,
        startWallNanos: UInt64
    ) {
        self.id = id
        self.name = name
        self.key = key
        self.site = site
        self.budgetNanos = budgetNanos
        self.lifetime = lifetime
        self.startWallNanos = startWallNanos
    }
}

/// One event of a session journal.
enum SessionEntry: Sendable, Equatable {
    /// The session's identity: the journal's segment header.
    case start(SessionInfo)
    case spanBegan(JournalledSpan)
    case spanClosed(id: UInt64)
    case ongoingSet(OngoingMarker)
    case ongoingCleared(id: UInt64)
    /// Clean shutdown: the session is `terminated`, not `crashed`.
    case end(wallNanos: UInt64)
}

/// A decoded entry with its sequence number (0 for the header, which is repeated per segment).
struct SequencedEntry: Sendable, Equatable {
    var sequence: UInt64
    var entry: SessionEntry
}
