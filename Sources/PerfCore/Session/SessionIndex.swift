// The session index: one small file per session beside the lock files (`sessions/<id>.session.json`),
// written whole under a temporary name and renamed, so several processes update it without a
// lock and a reader never sees half a record.
import Foundation
import JournalKit

#if canImport(Glibc)
    import Glibc
#endif

/// The records of one `sessions/` folder (see ``SessionIndexRecord``).
///
/// One file per session rather than one shared log: each record has a single writer at a time
/// (the live process at its start and end, then the one recovery that holds its lock), so a
/// write is a whole-file replace by `rename(2)` — atomic, never torn, with no lock shared between
/// processes and no compaction that could lose a concurrent append. Pruning is a set of `unlink`s
/// that never touch a session whose journal is still there, which covers every live session.
public struct SessionIndex: Sendable {
    /// The file name suffix of a record: `<id>.session.json`.
    public static let suffix = ".session.json"
    /// Records kept: past this many, the oldest of sessions whose journal is gone are deleted.
    public static let defaultCapacity = 1_000

    /// The `sessions/` folder.
    public let folder: String
    /// Whether each write is synced before its rename (the store's `.fsync` durability).
    let sync: Bool

    /// The index of `sessions/` inside `dataDirectory`.
    public init(dataDirectory: URL) {
        self.init(folder: dataDirectory.appendingPathComponent("sessions", isDirectory: true).path, sync: false)
    }

    init(folder: String, sync: Bool) {
        self.folder = folder
        self.sync = sync
    }

    /// The record file of session `id`.
    func path(id: String) -> String { folder + "/" + id + Self.suffix }

    /// Writes `record` whole: a temporary file of a name no other writer uses, then `rename(2)`
    /// over the record. A failed write leaves the previous record (or none) and no temporary file.
    func write(_ record: SessionIndexRecord) throws(SessionError) {
        guard SessionInfo.isValidID(record.id) else {
            throw SessionError(code: .invalidID, message: "session id '\(record.id)' cannot name an index record")
        }
        let bytes = SessionIndexCodec.encode(record)
        let final = path(id: record.id)
        let temporary = folder + "/." + record.id + Self.suffix + ".tmp-\(getpid())-\(SessionInfo.randomID())"
        let fd: Int32
        switch CoreSyscalls.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode: 0o600) {
        case .success(let opened): fd = Int32(opened)
        case .failure(let error): throw failure("cannot create", temporary, error)
        }
        var error = bytes.withUnsafeBytes { CoreSyscalls.writeAll(fd, $0) }
        if error == 0, sync, case .failure(let code) = CoreSyscalls.fsync(fd) { error = code }
        CoreSyscalls.close(fd)
        if error == 0, case .failure(let code) = CoreSyscalls.rename(temporary, final) { error = code }
        if error != 0 {
            _ = CoreSyscalls.unlink(temporary)
            throw failure("cannot write", final, error)
        }
    }

    /// The record of session `id`, or `nil` when there is none this build reads.
    public func record(id: String) -> SessionIndexRecord? {
        guard SessionInfo.isValidID(id), let bytes = Self.readFile(path(id: id)) else { return nil }
        return SessionIndexCodec.decode(bytes, expectedID: id)
    }

    /// Every record this build reads, oldest start first (ties by id). Never throws: an absent
    /// folder has none, and a file that is not a record (damaged, newer, too large, being
    /// written under its temporary name) is skipped.
    public func records() -> [SessionIndexRecord] {
        recordNames().compactMap { name in
            let id = String(name.dropLast(Self.suffix.count))
            return Self.readFile(folder + "/" + name).flatMap { SessionIndexCodec.decode($0, expectedID: id) }
        }.sorted { ($0.startedAtMs, $0.id) < ($1.startedAtMs, $1.id) }
    }

    /// Keeps the newest `capacity` records (by start; a file that is not a readable record counts
    /// as oldest), never deleting the record of a session whose journal (`sessions/<id>/`) is
    /// still there: that covers every live session, whose journal exists from before its record
    /// is first written until a later recovery acknowledges it. Also deletes temporary files
    /// abandoned by a writer killed mid-write (older than ten minutes; a write takes microseconds).
    ///
    /// Several processes may prune at once: an unlink that finds the file gone is harmless.
    func prune(capacity: Int = SessionIndex.defaultCapacity) {
        removeAbandonedTemporaries()
        let names = recordNames()
        guard names.count > capacity else { return }
        let dated = names.map { name -> (startedAtMs: Int64, name: String) in
            let id = String(name.dropLast(Self.suffix.count))
            let record = Self.readFile(folder + "/" + name).flatMap { SessionIndexCodec.decode($0, expectedID: id) }
            return (record?.startedAtMs ?? -1, name)
        }.sorted { ($0.startedAtMs, $0.name) < ($1.startedAtMs, $1.name) }
        var excess = names.count - capacity
        for entry in dated where excess > 0 {
            let id = String(entry.name.dropLast(Self.suffix.count))
            // A journal still there: live, or not yet recovered. Its record stays.
            guard case .failure(let error) = CoreSyscalls.status(ofPath: folder + "/" + id), error.errno == ENOENT
            else { continue }
            _ = CoreSyscalls.unlink(folder + "/" + entry.name)
            excess -= 1
        }
    }

    private func removeAbandonedTemporaries() {
        AbandonedTemporaries.remove(in: folder) { $0.hasPrefix(".") && $0.contains(Self.suffix + ".tmp-") }
    }

    /// Names of the form `<valid id>.session.json`.
    private func recordNames() -> [String] {
        listing().filter { name in
            name.hasSuffix(Self.suffix) && SessionInfo.isValidID(String(name.dropLast(Self.suffix.count)))
        }
    }

    private func listing() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] }

    /// The file's bytes, or `nil` when it cannot be read or is larger than a record can be.
    static func readFile(_ path: String) -> [UInt8]? {
        // Non-blocking and regular files only: a FIFO or device under a record's name must not
        // hang or feed the reader.
        guard case .success(let opened) = CoreSyscalls.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        else { return nil }
        let fd = Int32(opened)
        defer { CoreSyscalls.close(fd) }
        guard case .success(let status) = CoreSyscalls.status(of: fd), status.st_mode & S_IFMT == S_IFREG else {
            return nil
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let read = chunk.withUnsafeMutableBytes { CoreSyscalls.read(fd, into: $0) }
            guard case .success(let count) = read else { return nil }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > SessionIndexCodec.maximumBytes { return nil }
        }
    }

    private func failure(_ action: String, _ path: String, _ error: Int32) -> SessionError {
        SessionError(
            code: .storage,
            message: "\(action) the session index record \(path): \(String(cString: strerror(error))) (errno \(error))")
    }
}
