// A session's flock(2) held on `sessions/<id>.lock` for its life; its calls go through CoreSyscalls.
import Foundation
import JournalKit

#if canImport(Glibc)
    import Glibc
#endif

/// An exclusive, non-blocking `flock` on a file, released when closed or when the process dies.
///
/// `flock` locks belong to an open file description, so a second open in the same process
/// conflicts too: tests can stand in for "another process" in-process, and the kernel releases
/// the lock of a SIGKILLed process with no cleanup on our side.
final class SessionLockFile: Sendable {
    enum Outcome {
        case acquired(SessionLockFile)
        /// Another open description (a live session) holds it.
        case busy
    }

    let path: String
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { CoreSyscalls.close(descriptor) }

    /// Opens (creating with mode 0600) and tries to lock `path` without waiting.
    ///
    /// Lock files are unlinked by whoever holds them (an acknowledged or stale session), so a lock
    /// won on a descriptor whose file was unlinked meanwhile guards nothing: it is dropped and the
    /// path opened again until the locked file is the one the path names.
    static func tryAcquire(path: String) throws(SessionError) -> Outcome {
        while true {
            let descriptor: Int32
            switch CoreSyscalls.open(path, O_RDWR | O_CREAT | O_CLOEXEC, mode: 0o600) {
            case .success(let fd): descriptor = Int32(fd)
            case .failure(let error): throw failure("cannot open session lock", path, error)
            }
            if case .failure(let error) = CoreSyscalls.lock(descriptor, LOCK_EX | LOCK_NB) {
                CoreSyscalls.close(descriptor)
                if error == EWOULDBLOCK { return .busy }
                throw failure("cannot lock", path, error)
            }
            if namesSameFile(descriptor: descriptor, path: path) {
                return .acquired(SessionLockFile(path: path, descriptor: descriptor))
            }
            CoreSyscalls.close(descriptor)
        }
    }

    /// Creates the lock file of a starting session already locked: made and locked under a
    /// temporary name, then linked to `path`, so the name never exists unlocked.
    ///
    /// With `tryAcquire`'s open-then-lock, another process starting at the same moment could find
    /// the fresh lock file in its recovery (no journal beside it yet: a stale lock), win the lock
    /// in between, and this session was then refused as "already live" and ran without its
    /// journal. Falls back to ``tryAcquire(path:)`` where links cannot be made, or when the path
    /// exists already.
    static func createLocked(path: String) throws(SessionError) -> Outcome {
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = directory + "/.lock-\(getpid())-\(UInt64.random(in: .min ... .max))"
        let flags = O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC
        guard case .success(let opened) = CoreSyscalls.open(temporary, flags, mode: 0o600) else {
            return try tryAcquire(path: path)
        }
        let descriptor = Int32(opened)
        defer { _ = CoreSyscalls.unlink(temporary) }
        guard case .success = CoreSyscalls.lock(descriptor, LOCK_EX | LOCK_NB) else {
            CoreSyscalls.close(descriptor)
            return try tryAcquire(path: path)
        }
        if case .success = CoreSyscalls.link(temporary, path) {
            return .acquired(SessionLockFile(path: path, descriptor: descriptor))
        }
        CoreSyscalls.close(descriptor)
        return try tryAcquire(path: path)
    }

    private static func namesSameFile(descriptor: Int32, path: String) -> Bool {
        guard case .success(let opened) = CoreSyscalls.status(of: descriptor),
            case .success(let named) = CoreSyscalls.status(ofPath: path)
        else { return false }
        return opened.st_dev == named.st_dev && opened.st_ino == named.st_ino
    }

    private static func failure(_ action: String, _ path: String, _ error: Int32) -> SessionError {
        SessionError(
            code: .storage,
            message: "\(action) \(path): \(String(cString: strerror(error))) (errno \(error)); "
                + "make the data directory writable (and on a file system with flock) or point PERF_DIR elsewhere")
    }

    /// Deletes the lock file while still holding the lock, so no one ingests between the journal's
    /// removal and this.
    func unlinkPath() { _ = CoreSyscalls.unlink(path) }
}
