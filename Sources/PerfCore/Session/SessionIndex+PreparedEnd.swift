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
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard Self.writeAll(fd, bytes, offset: 0) == 0 else {
            unlink(path)
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
        let fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return false }
        var failed = Self.writeAll(fd, bytes, offset: 0) != 0
        if !failed, sync, fsync(fd) != 0 { failed = true }
        close(fd)
        guard !failed, rename(path, self.path(id: record.id)) == 0 else { return false }
        return true
    }

    /// Deletes session `id`'s end written ahead, if any (its record is final another way).
    func removePreparedEnd(id: String) {
        guard SessionInfo.isValidID(id) else { return }
        unlink(endingPath(id: id))
    }

    /// `pwrite(2)` until all of `bytes` is at `offset` (EINTR retried): 0, or the errno.
    private static func writeAll(_ fd: Int32, _ bytes: [UInt8], offset: Int) -> Int32 {
        var done = 0
        while done < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                pwrite(fd, raw.baseAddress! + done, raw.count - done, off_t(offset + done))
            }
            if written > 0 {
                done += written
            } else if written < 0, errno == EINTR {
                continue
            } else {
                return written < 0 ? errno : EIO
            }
        }
        return 0
    }
}
