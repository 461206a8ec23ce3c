// Owns `<dir>/sessions/`: starts the live session and recovers, then deletes, prior ones.
import Foundation
import JournalKit
import Synchronization

/// The sessions of one data directory: one journal per session under `sessions/<id>/`, and a
/// lock file `sessions/<id>.lock` held by the live process for the session's whole life.
///
/// At start-up, recover before starting the new session:
///
/// ```swift
/// let store = SessionStore(directory: dataDirectory)
/// for recovered in store.recoverPriorSessions() {
///     try ledger.write(recovered)          // crashed / terminated, orphaned spans, fatal hangs
///     try store.acknowledge(recovered)     // only now is its journal deleted
/// }
/// let session = try store.start(SessionInfo(app: .init(name: "myservice", version: "1.4.0")))
/// ```
///
/// Several processes may share the directory: a journal whose lock is held belongs to a live
/// process and is never read, and a recovered journal stays locked by the recovering store until
/// acknowledged, so two processes never ingest the same one twice.
public final class SessionStore: Sendable {
    /// The data directory; sessions live under `sessions/` inside it.
    public let directory: URL
    /// The byte budget of each session's journal.
    public let journalByteBudget: Int
    /// How far each journal append survives.
    public let durability: Journal.Durability
    /// Where end markers read their wall time; tests inject a ``ManualClock``.
    public let clock: any PerfClock

    private var sessionsDirectory: URL { directory.appendingPathComponent("sessions", isDirectory: true) }
    /// The session index beside the lock files: each session's start, end and status, kept
    /// when its ledger lines rotate away (see ``SessionIndex``).
    public var index: SessionIndex { SessionIndex(folder: sessionsDirectory.path, sync: durability == .fsync) }
    // Locks of sessions this store recovered and the caller has not acknowledged yet.
    private let recoveredLocks = Mutex<[String: SessionLockFile]>([:])

    /// Creates a store over `directory`; nothing is touched on disk until it is used.
    ///
    /// - Parameters:
    ///   - directory: The data directory (created `0700` if missing).
    ///   - journalByteBudget: Each session journal's cap; older entries drop first past it. The
    ///     default 1 MiB holds tens of thousands of span begins.
    ///   - durability: `.processDeath` (default) survives crashes and SIGKILL; `.fsync` also
    ///     survives power loss, at a sync per append.
    ///   - clock: The clock of end markers; the system clock by default.
    public init(
        directory: URL, journalByteBudget: Int = 1 << 20, durability: Journal.Durability = .processDeath,
        clock: any PerfClock = SystemClock()
    ) {
        self.directory = directory
        self.journalByteBudget = journalByteBudget
        self.durability = durability
        self.clock = clock
    }

    /// Starts the session `info` and returns it live, its lock held until ``LiveSession/end()``.
    ///
    /// - Throws: ``SessionError`` when the directory or journal cannot be created, the id cannot
    ///   name a directory, or a session with the same id is live.
    public func start(_ info: SessionInfo) throws(SessionError) -> LiveSession {
        guard SessionInfo.isValidID(info.id) else {
            throw SessionError(
                code: .invalidID,
                message: "session id '\(info.id)' must be 1-64 characters of [0-9A-Za-z_-]; use SessionInfo.randomID()")
        }
        try createSessionsDirectory()
        let lockPath = sessionsDirectory.appendingPathComponent("\(info.id).lock").path
        // The lock exists before the journal does, so a recovery that sees the journal sees it locked.
        guard case .acquired(let lock) = try SessionLockFile.createLocked(path: lockPath) else {
            throw SessionError(
                code: .alreadyLive, message: "session \(info.id) is already live; give each run its own id")
        }
        let journalDirectory = sessionsDirectory.appendingPathComponent(info.id, isDirectory: true)
        do {
            let journal = try Journal(
                directory: journalDirectory,
                configuration: .init(
                    byteBudget: journalByteBudget, durability: durability,
                    segmentHeader: SessionEntryCodec.encode(.start(info), sequence: 0)))
            // Written once the journal exists: a pruner keeps every record whose journal is there.
            // The index is a convenience of reports; a session still starts without it.
            try? index.write(SessionIndexRecord(starting: info))
            index.prune()
            return LiveSession(
                info: info, journal: journal, lock: lock, clock: clock, byteBudget: journalByteBudget, index: index)
        } catch {
            throw SessionError(
                code: .journal,
                message: "cannot create the session journal at \(journalDirectory.path): \(error); "
                    + "check that the data directory is writable and not full")
        }
    }

    /// Where session `id` keeps its ledger queue (Perf's crash-durable queue of ledger lines):
    /// beside its journal, so the next start replays it and acknowledgement deletes it.
    public func sessionPath(id: String) -> String {
        sessionsDirectory.appendingPathComponent(id, isDirectory: true).path
    }

    public func ledgerQueuePath(id: String) -> String {
        sessionsDirectory.appendingPathComponent(id, isDirectory: true).appendingPathComponent("ledger.queue").path
    }

    /// Where session `id` keeps its span memory (``SpanMemory``): beside its journal, so that
    /// recovery reads it and acknowledgement deletes it with the journal.

    public func spanMemoryPath(id: String) -> String {
        sessionsDirectory.appendingPathComponent(id, isDirectory: true)
            .appendingPathComponent(RecoveredSpanMemory.fileName).path
    }

    /// Reads every prior session's journal that no live process holds.
    ///
    /// Call it before ``start(_:)``. It never throws: a journal that cannot be read is reported
    /// with status `.unreadable` and stays on disk. Each returned session stays locked by this
    /// store (other processes skip it) until ``acknowledge(_:)``; calling this again before that
    /// reports it again.
    ///
    /// - Returns: The sessions, oldest start first.
    public func recoverPriorSessions() -> [RecoveredSession] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: sessionsDirectory.path)) ?? []
        removeStaleLocks(names)
        var recovered: [RecoveredSession] = []
        for name in names.sorted() where SessionInfo.isValidID(name) {
            var isDirectory: ObjCBool = false
            let journalDirectory = sessionsDirectory.appendingPathComponent(name, isDirectory: true)
            guard FileManager.default.fileExists(atPath: journalDirectory.path, isDirectory: &isDirectory),
                isDirectory.boolValue
            else { continue }
            guard let session = recover(id: name, journalDirectory: journalDirectory) else { continue }
            recovered.append(session)
        }
        return recovered.sorted { ($0.info?.startWallNanos ?? 0, $0.id) < ($1.info?.startWallNanos ?? 0, $1.id) }
    }

    /// Deletes the journal of a session that has been written elsewhere (the ledger), then
    /// releases its lock. A second recovery then finds nothing of it.
    ///
    /// An `.unreadable` session is not deleted: its lock is released and the journal stays for the
    /// next start. Acknowledging a session twice, or one this store did not recover, does nothing.
    ///
    /// - Throws: ``SessionError`` with code `.cleanup` if the journal cannot be deleted; it is
    ///   then reported again by the next recovery.
    public func acknowledge(_ recovered: RecoveredSession) throws(SessionError) {
        guard let lock = recoveredLocks.withLock({ $0.removeValue(forKey: recovered.id) }) else { return }
        if case .unreadable = recovered.status { return }
        let journalDirectory = sessionsDirectory.appendingPathComponent(recovered.id, isDirectory: true)
        do {
            try FileManager.default.removeItem(at: journalDirectory)
        } catch {
            throw SessionError(
                code: .cleanup,
                message: "cannot delete the ingested session journal \(journalDirectory.path): \(error); "
                    + "it will be reported again at the next start")
        }
        // Unlinked while still locked: a recovery that opened it meanwhile finds it busy, and one
        // that opens it afterwards finds no journal.
        lock.unlinkPath()
    }

    private func recover(id: String, journalDirectory: URL) -> RecoveredSession? {
        let lock: SessionLockFile
        if let held = recoveredLocks.withLock({ $0[id] }) {
            lock = held
        } else {
            let lockPath = sessionsDirectory.appendingPathComponent("\(id).lock").path
            do {
                guard case .acquired(let acquired) = try SessionLockFile.tryAcquire(path: lockPath) else { return nil }
                lock = acquired
            } catch {
                return RecoveredSession(id: id, info: nil, status: .unreadable(reason: error.message))
            }
            // Another store may have acknowledged it between the listing and the lock.
            guard FileManager.default.fileExists(atPath: journalDirectory.path) else {
                lock.unlinkPath()
                return nil
            }
        }
        var session: RecoveredSession
        do {
            session = SessionIngest.ingest(id: id, recovery: try Journal.recover(directory: journalDirectory))
        } catch {
            session = RecoveredSession(
                id: id, info: nil,
                status: .unreadable(reason: "cannot read the journal at \(journalDirectory.path): \(error)"))
        }
        if session.info != nil {
            do {
                session.spanMemory = try RecoveredSpanMemory.read(
                    path: journalDirectory.appendingPathComponent(RecoveredSpanMemory.fileName).path)
            } catch {
                session.spanMemoryProblem = error.description
            }
        }
        recoveredLocks.withLock { $0[id] = lock }
        recordOutcome(session)
        return session
    }

    /// Tells the index how a recovered session ended, when its record is missing (a session from
    /// before the index, or one whose record could not be written) or still says `active`.
    /// Written while the session's lock is held, before its journal goes: no pruner deletes it.
    private func recordOutcome(_ session: RecoveredSession) {
        // The dead session's end written ahead is not its end.
        index.removePreparedEnd(id: session.id)
        guard let info = session.info else { return }
        let known = index.record(id: session.id)
        guard known == nil || known?.status == .active else { return }
        var record = known ?? SessionIndexRecord(starting: info)
        switch session.status {
        case .crashed:
            record.status = .crashed
            record.lastAliveAtMs = session.spanMemory.map { SessionIndexRecord.milliseconds($0.lastAliveWallNanos) }
        case .terminated(let endWallNanos):
            record.status = .terminated
            record.endedAtMs = SessionIndexRecord.milliseconds(endWallNanos)
        case .unreadable: return
        }
        try? index.write(record)
    }

    /// Deletes lock files left without a journal by a crash inside ``acknowledge(_:)``, and the
    /// temporary names of lock files a start killed before linking them (``SessionLockFile``).
    private func removeStaleLocks(_ names: [String]) {
        AbandonedTemporaries.remove(in: sessionsDirectory.path) { $0.hasPrefix(".lock-") }
        let present = Set(names)
        for name in names where name.hasSuffix(".lock") {
            let id = String(name.dropLast(".lock".count))
            guard SessionInfo.isValidID(id), !present.contains(id) else { continue }
            let path = sessionsDirectory.appendingPathComponent(name).path
            if case .acquired(let lock)? = try? SessionLockFile.tryAcquire(path: path),
                !FileManager.default.fileExists(atPath: sessionsDirectory.appendingPathComponent(id).path)
            {
                lock.unlinkPath()
            }
        }
    }

    private func createSessionsDirectory() throws(SessionError) {
        do {
            try FileManager.default.createDirectory(
                at: sessionsDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw SessionError(
                code: .storage,
                message: "cannot create \(sessionsDirectory.path): \(error); set PERF_DIR to a writable directory")
        }
    }
}
