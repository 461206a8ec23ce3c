// What recovery learned about one prior session, ready to be written to the ledger.
/// A prior session found in the data directory by ``SessionStore/recoverPriorSessions()``.
///
/// Write what it says to the ledger, then ``SessionStore/acknowledge(_:)`` it so its journal is
/// deleted; until then, every recovery reports it again (dedupe by ``id`` if you recover twice).
public struct RecoveredSession: Sendable, Equatable {
    /// How the session ended.
    public enum Status: Sendable, Equatable {
        /// No end marker: the process died (crash, SIGKILL, power loss).
        case crashed
        /// Ended cleanly at the given time (nanoseconds since the Unix epoch).
        case terminated(endWallNanos: UInt64)
        /// The journal could not be read or named no session. It stays on disk for the next
        /// start; ``acknowledge`` does not delete it. `reason` says what failed.
        case unreadable(reason: String)
    }

    /// The session's id (its directory name under `sessions/`).
    public var id: String
    /// The session's identity, `nil` when ``status`` is `.unreadable`.
    public var info: SessionInfo?
    /// How the session ended.
    public var status: Status
    /// Long-lived spans that began and never closed, oldest first; their duration is unknown.
    ///
    /// For a crashed session they close as `orphaned`. A terminated session lists spans its
    /// shutdown left open, which a clean shutdown normally closes first.
    public var orphanedSpans: [JournalledSpan]
    /// Events still in progress when a crashed session died (e.g. a hang): each is fatal, with
    /// its last journalled duration and payload, oldest first. Always empty for a terminated
    /// session.
    public var fatalMarkers: [OngoingMarker]
    /// What the journal could not preserve (a torn tail, dropped older entries, a gap, entries
    /// that did not decode), or `nil` when it is complete.
    public var recoveryNote: String?
    /// What the session's span memory held (histograms, last spans, last moment alive), or nil
    /// when it left none (a clean end removes it; a session from before span memory never had one).
    public var spanMemory: RecoveredSpanMemory?
    /// Why the session's span memory file was not used (damaged, another version), if it was not.
    public var spanMemoryProblem: String?

    /// Creates a recovered session.
    public init(
        id: String, info: SessionInfo?, status: Status, orphanedSpans: [JournalledSpan] = [],
        fatalMarkers: [OngoingMarker] = [], recoveryNote: String? = nil
    ) {
        self.id = id
        self.info = info
        self.status = status
        self.orphanedSpans = orphanedSpans
        self.fatalMarkers = fatalMarkers
        self.recoveryNote = recoveryNote
    }
}
