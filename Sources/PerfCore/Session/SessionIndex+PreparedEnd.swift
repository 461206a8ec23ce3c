// A session's end record written ahead, at its start: on a disk that has since filled up, the end
// is still recorded, by overwriting those bytes in place and renaming them over the record.
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension SessionIndex {
    /// Where session `id`'s end record waits (`.<id>.session.json.ending`): a dot name that is no
    /// record and no abandoned temporary to the pruner.
    func endingPath(id: String) -> String { folder + "/." + id + Self.suffix + ".ending" }

    /// Writes `record` (the session's end, with a placeholder time) ahead while the disk has room,
    /// and returns its size; nil when it could not be written (then the end is written as usual).
    ///
    /// A session that ends on a full disk (every `write(2)` failing with ENOSPC) could not record
    /// its end, and reports showed it `active` forever. Overwriting bytes a file already has needs
    /// no new block (ext4, xfs, tmpfs), and neither does a rename over an existing name.
    func prepareEnd(_ record: SessionIndexRecord) -> Int? {
        guard SessionInfo.isValidID(record.id) else { return nil }
        let bytes = SessionIndexCodec.encode(record)
        let path = endingPath(id: record.id)
        let flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW
        guard case .success(let opened) = CoreSyscalls.open(path, flags, mode: 0o600) else { return nil }
        let fd = Int32(opened)
        defer { CoreSyscalls.close(fd) }
        guard bytes.withUnsafeBytes({ CoreSyscalls.writeAll(fd, $0, at: 0) }) == 0 else {
            _ = CoreSyscalls.unlink(path)
            return nil
        }
        return bytes.count
    }

    /// Records `record` through the end written ahead: its bytes over the prepared ones (same size:
    /// an end time has as many digits as the start), then `rename(2)` over the record. False when
    /// that cannot be done (sizes differ, the prepared file is gone); then `write` it as usual.
    func commitEnd(_ record: SessionIndexRecord, preparedBytes: Int) -> Bool {
        let bytes = SessionIndexCodec.encode(record)
        guard bytes.count == preparedBytes, SessionInfo.isValidID(record.id) else { return false }
        let path = endingPath(id: record.id)
        guard case .success(let opened) = CoreSyscalls.open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW) else {
            return false
        }
        let fd = Int32(opened)
        var failed = bytes.withUnsafeBytes { CoreSyscalls.writeAll(fd, $0, at: 0) } != 0
        if !failed, sync, case .failure = CoreSyscalls.fsync(fd) { failed = true }
        CoreSyscalls.close(fd)
        guard !failed, case .success = CoreSyscalls.rename(path, self.path(id: record.id)) else { return false }
        return true
    }

    /// Deletes session `id`'s end written ahead, if any (its record is final another way).
    func removePreparedEnd(id: String) {
        guard SessionInfo.isValidID(id) else { return }
        _ = CoreSyscalls.unlink(endingPath(id: id))
    }
}
