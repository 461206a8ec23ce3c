// The running process's session: journals long-lived spans and ongoing markers until end().
import Foundation
import JournalKit
import Synchronization

/// The session of the running process, returned by ``SessionStore/start(_:)``.
///
/// Journal only what a crash must not erase: the begin of long-lived (bounded or indefinite)
/// spans, their close, and events in progress (``OngoingMarker``). Every call is synchronous and
/// safe from any thread; when it returns, the entry survives the death of the process.
///
/// The journal is a flight recorder: past its byte budget the oldest entries drop. So that a
/// span begun long ago is not dropped with them while still open, the session re-journals
/// everything still open (a checkpoint) after every quarter of the budget written; the newest
/// half of the budget always survives, and with it the newest checkpoint.
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
    /// What is open, and the numbering that orders entries.
    private struct State {
        // Numbers entries in the order their effects happened (assigned under the lock), so
        // recovery can replay appends that reached the journal out of order and tell a gap
        // (lost entries) from silence.
        var sequence: UInt64 = 0
        var openSpans: [UInt64: JournalledSpan] = [:]
        var ongoing: [UInt64: OngoingMarker] = [:]
        var bytesSinceCheckpoint = 0
        var ended = false
        // Held until end(): while it is, no other process's recovery touches this journal.
        var lock: SessionLockFile?

        mutating func encode(_ entry: SessionEntry) -> Data {
            sequence += 1
            return SessionEntryCodec.encode(entry, sequence: sequence)
        }
    }

    /// The session this journals.
    public let info: SessionInfo

    private let journal: Journal
    private let clock: any PerfClock
    private let index: SessionIndex?
    private let checkpointBytes: Int
    private let state: Mutex<State>
    private let failures = Atomic<Int>(0)
    /// The size of the end record written ahead in the index (``SessionIndex/prepareEnd(_:)``).
    private let preparedEndBytes: Int?

    init(
        info: SessionInfo, journal: Journal, lock: SessionLockFile, clock: any PerfClock, byteBudget: Int,
        index: SessionIndex? = nil
    ) {
        self.info = info
        self.journal = journal
        self.clock = clock
        self.index = index
        checkpointBytes = max(1, byteBudget / 4)
        state = Mutex(State(lock: lock))
        // The end time is a placeholder of the same width (milliseconds have 13 digits until 2286).
        var ending = SessionIndexRecord(starting: info)
        ending.status = .terminated
        ending.endedAtMs = ending.startedAtMs
        preparedEndBytes = index?.prepareEnd(ending)
    }

    /// Journal appends that failed (or calls made after ``end()``) since the session started.
    public var failureCount: Int { failures.load(ordering: .relaxed) }

    /// Whether ``end()`` has been called.
    public var isEnded: Bool { state.withLock { $0.ended } }

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
        record(
            .spanBegan(
                JournalledSpan(
                    id: id, name: name, key: key, site: site, budgetNanos: budgetNanos, lifetime: lifetime,
                    startWallNanos: startWallNanos)))
    }

    /// Journals that the span `id` closed (with any exit): it is no longer at risk of orphaning.
    public func spanClosed(id: UInt64) { record(.spanClosed(id: id)) }

    /// Journals an event in progress, or updates the one with the same ``OngoingMarker/id``.
    public func setOngoing(_ marker: OngoingMarker) { record(.ongoingSet(marker)) }

    /// Journals that the event `id` ended: a later crash does not make it fatal.
    public func clearOngoing(id: UInt64) { record(.ongoingCleared(id: id)) }

    /// Ends the session cleanly: journals the end marker, records the end in the session index,
    /// closes the journal and releases the lock, so the next start reports this session as
    /// `terminated`.
    ///
    /// Later calls on this session are counted as failures and otherwise ignored. Calling `end()`
    /// twice has no further effect.
    public func end() {
        let end: (entry: Data, wallNanos: UInt64)? = state.withLock { state in
            guard !state.ended else { return nil }
            state.ended = true
            let wallNanos = clock.wallNanos()
            return (state.encode(.end(wallNanos: wallNanos)), wallNanos)
        }
        guard let end else { return }
        append([end.entry])
        // Under the lock still: no recovery writes this record meanwhile.
        if let index {
            var record = SessionIndexRecord(starting: info)
            record.status = .terminated
            record.endedAtMs = SessionIndexRecord.milliseconds(end.wallNanos)
            // Through the end written ahead first: on a full disk a new write would fail.
            let committed = preparedEndBytes.map { index.commitEnd(record, preparedBytes: $0) } ?? false
            if !committed {
                do {
                    try index.write(record)
                } catch {
                    failures.add(1, ordering: .relaxed)
                }
                index.removePreparedEnd(id: info.id)
            }
        }
        journal.close()
        // Dropping the lock file closes its descriptor, which releases the flock.
        state.withLock { $0.lock = nil }
    }

    private func record(_ entry: SessionEntry) {
        let encoded: [Data]? = state.withLock { state in
            guard !state.ended else { return nil }
            switch entry {
            case .spanBegan(let span): state.openSpans[span.id] = span
            case .spanClosed(let id): state.openSpans[id] = nil
            case .ongoingSet(let marker): state.ongoing[marker.id] = marker
            case .ongoingCleared(let id): state.ongoing[id] = nil
            case .start, .end: break
            }
            let data = state.encode(entry)
            state.bytesSinceCheckpoint += data.count
            guard state.bytesSinceCheckpoint >= checkpointBytes else { return [data] }
            state.bytesSinceCheckpoint = 0
            // Re-journalling an open span or marker is idempotent: recovery keys them by id.
            let spans = state.openSpans.values.sorted { $0.id < $1.id }.map { state.encode(.spanBegan($0)) }
            let markers = state.ongoing.values.sorted { $0.id < $1.id }.map { state.encode(.ongoingSet($0)) }
            return [data] + spans + markers
        }
        guard let encoded else {
            failures.add(1, ordering: .relaxed)
            return
        }
        // Outside the lock: appends are write(2)s, and `.fsync` journals sync.
        append(encoded)
    }

    private func append(_ entries: [Data]) {
        for data in entries {
            do {
                try journal.append(data)
            } catch {
                failures.add(1, ordering: .relaxed)
            }
        }
    }
}
