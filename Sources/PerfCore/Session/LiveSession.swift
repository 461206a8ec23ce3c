// The running process's session: journals long-lived spans and ongoing markers until end().
import Foundation
import JournalKit
import Synchronization

/// The session of the running process, returned by ``SessionStore/start(_:)``.
///
/// Journal only what a crash must not erase: the begin of long-lived (bounded or indefinite)
/// spans, their close, and events in progress (``OngoingMarker``). Every call is synchronous and
/// safe from any thread; when `append` returns the entry survives the death of the process.
///
/// - Note: No method throws. A journal failure (disk full, read-only file system) is counted in
///   ``failureCount`` and the call returns: the host program must never fail because of Perf.
///
/// ```swift
/// let session = try store.start(SessionInfo(app: .init(name: "myservice")))
/// session.spanBegan(id: 7, name: "sync.upload", key: nil, site: "App/Sync.swift:40",
///                   budgetNanos: 30_000_000_000, lifetime: "bounded", startWallNanos: now)
/// session.spanClosed(id: 7)
/// session.end()
/// ```
public final class LiveSession: Sendable {
    /// The session this journals.
    public let info: SessionInfo

    private let journal: Journal
    // Held until end(): while it is, no other process's recovery touches this journal.
    private let lock: Mutex<SessionLockFile?>
    // Numbers entries so recovery can tell a gap (lost entries) from silence. Assigned before the
    // append without a lock, so concurrent calls may land slightly out of order: recovery looks
    // for missing numbers, not for order.
    private let sequence = Atomic<UInt64>(0)
    private let failures = Atomic<Int>(0)
    private let ended = Atomic<Bool>(false)

    private let clock: any PerfClock

    init(info: SessionInfo, journal: Journal, lock: SessionLockFile, clock: any PerfClock) {
        self.info = info
        self.clock = clock
        self.journal = journal
        self.lock = Mutex(lock)
    }

    /// Journal appends that failed (or calls made after ``end()``) since the session started.
    public var failureCount: Int { failures.load(ordering: .relaxed) }

    /// Whether ``end()`` has been called.
    public var isEnded: Bool { ended.load(ordering: .acquiring) }

    /// Journals the begin of a long-lived span, so a crash reports it as orphaned.
    ///
    /// - Parameters:
    ///   - id: The span's id, unique within the session; ``spanClosed(id:)`` names it.
    ///   - name: The span's name.
    ///   - key: The key of a keyed span, if any.
    ///   - site: The call site, e.g. `"App/Sync.swift:40"`.
    ///   - budgetNanos: The span's budget, if any.
    ///   - lifetime: `"bounded"` or `"indefinite"` (scoped spans are not worth journalling).
    ///   - startWallNanos: When the span began, in nanoseconds since the Unix epoch.
    public func spanBegan(
        id: UInt64, name: String, key: String?, site: String, budgetNanos: UInt64?, lifetime: String,
        startWallNanos: UInt64
    ) {
        append(
            .spanBegan(
                JournalledSpan(
                    id: id, name: name, key: key, site: site, budgetNanos: budgetNanos, lifetime: lifetime,
                    startWallNanos: startWallNanos)))
    }

    /// Journals that the span `id` closed (with any exit): it is no longer at risk of orphaning.
    public func spanClosed(id: UInt64) { append(.spanClosed(id: id)) }

    /// Journals an event in progress, or updates the one with the same ``OngoingMarker/id``.
    public func setOngoing(_ marker: OngoingMarker) { append(.ongoingSet(marker)) }

    /// Journals that the event `id` ended: a later crash does not make it fatal.
    public func clearOngoing(id: UInt64) { append(.ongoingCleared(id: id)) }

    /// Ends the session cleanly: journals the end marker, closes the journal and releases the
    /// lock, so the next start reports this session as `terminated`.
    ///
    /// Later calls on this session are counted as failures and otherwise ignored. Calling `end()`
    /// twice has no further effect.
    public func end() {
        guard ended.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        appendNow(.end(wallNanos: clock.wallNanos()))
        journal.close()
        // Dropping the lock file closes its descriptor, which releases the flock.
        lock.withLock { $0 = nil }
    }

    private func append(_ entry: SessionEntry) {
        guard !ended.load(ordering: .acquiring) else {
            failures.add(1, ordering: .relaxed)
            return
        }
        appendNow(entry)
    }

    private func appendNow(_ entry: SessionEntry) {
        let number = sequence.add(1, ordering: .relaxed).newValue
        do {
            try journal.append(SessionEntryCodec.encode(entry, sequence: number))
        } catch {
            failures.add(1, ordering: .relaxed)
        }
    }
}
