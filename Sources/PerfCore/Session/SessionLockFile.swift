// The syscall seam of sessions: an flock(2) held on `sessions/<id>.lock` for a session's life.
import Foundation

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

    deinit { close(descriptor) }

    /// Opens (creating with mode 0600) and tries to lock `path` without waiting.
    ///
    /// Lock files are unlinked by whoever holds them (an acknowledged or stale session), so a lock
    /// won on a descriptor whose file was unlinked meanwhile guards nothing: it is dropped and the
    /// path opened again until the locked file is the one the path names.
    static func tryAcquire(path: String) throws(SessionError) -> Outcome {
        while true {
            let descriptor = retryingEINTR { open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600) }
            guard descriptor >= 0 else { throw failure("cannot open session lock", path, errno) }
            guard retryingEINTR({ flock(descriptor, LOCK_EX | LOCK_NB) }) == 0 else {
                let error = errno
                close(descriptor)
                if error == EWOULDBLOCK { return .busy }
                throw failure("cannot lock", path, error)
            }
            if namesSameFile(descriptor: descriptor, path: path) {
                return .acquired(SessionLockFile(path: path, descriptor: descriptor))
            }
            close(descriptor)
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
        let descriptor = retryingEINTR { open(temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600) }
        guard descriptor >= 0 else { return try tryAcquire(path: path) }
        defer { _ = unlink(temporary) }
        guard retryingEINTR({ flock(descriptor, LOCK_EX | LOCK_NB) }) == 0 else {
            close(descriptor)
            return try tryAcquire(path: path)
        }
        if retryingEINTR({ link(temporary, path) }) == 0 {
            return .acquired(SessionLockFile(path: path, descriptor: descriptor))
        }
        close(descriptor)
        return try tryAcquire(path: path)
    }

    private static func namesSameFile(descriptor: Int32, path: String) -> Bool {
        var opened = stat()
        var named = stat()
        guard fstat(descriptor, &opened) == 0, stat(path, &named) == 0 else { return false }
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
    func unlinkPath() { _ = unlink(path) }

    private static func retryingEINTR(_ call: () -> Int32) -> Int32 {
        while true {
            let result = call()
            if result >= 0 || errno != EINTR { return result }
        }
    }
}
