// The syscall seam of PerfCore: sessions (lock files, index records, ends written ahead), span
// memory and the clean-up of abandoned temporaries call the kernel only through here. EINTR is
// retried by the package's one helper (`retryingEINTR`), and debug builds inject faults
// (`CoreSyscallFaults`) so tests can fail any of these calls without a full or broken disk.
import CPerfShims
import Glibc
import JournalKit

/// Thin wrappers over the file and memory syscalls of PerfCore.
///
/// Each returns the errno instead of throwing, so a caller keeps its own error (`SessionError`,
/// `SpanMemoryError`) and message. Every call but `close`, `mmap`, `munmap`, `msync` and `mincore`
/// (which do not fail with EINTR, or must not be retried) is retried on EINTR.
enum CoreSyscalls {
    /// The calls a debug build can make fail.
    enum Operation: Hashable, Sendable {
        case open, write, read, sync, rename, unlink, link, lock, fileStatus, pathStatus, map, allocate, limit, resident
    }

    /// The errno planned for this call of `operation`, or nil to make the real call.
    @inline(__always)
    private static func injected(_ operation: Operation) -> Int32? {
        #if DEBUG
            return CoreSyscallFaults.current?.take(operation)
        #else
            return nil
        #endif
    }

    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0) -> SyscallResult {
        if let code = injected(.open) { return .failure(code) }
        return retryingEINTR { Int(Glibc.open(path, flags, mode)) }
    }

    /// close(2), not retried on EINTR (on Linux the descriptor is gone either way).
    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// One `pwrite(2)` of `bytes` at `offset`, or one `write(2)` when `offset` is nil; a short count
    /// is returned as is.
    static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int? = nil) -> SyscallResult {
        if let code = injected(.write) { return .failure(code) }
        var count = bytes.count
        #if DEBUG
            // Really write half, as a full disk would, so the caller's loop sees a short count.
            if CoreSyscallFaults.current?.takeShortWrite() == true { count = max(1, count / 2) }
        #endif
        if let offset {
            return retryingEINTR { Glibc.pwrite(fd, bytes.baseAddress, count, off_t(offset)) }
        }
        return retryingEINTR { Glibc.write(fd, bytes.baseAddress, count) }
    }

    /// Writes all of `bytes` (from `offset` on with `pwrite(2)`, or at the file offset): 0, or the
    /// errno that stopped it (`EIO` for a write that took nothing).
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int? = nil) -> Int32 {
        var done = 0
        while done < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[done...])
            switch write(fd, rest, at: offset.map { $0 + done }) {
            case .success(let written) where written > 0: done += written
            case .success: return EIO
            case .failure(let code): return code
            }
        }
        return 0
    }

    /// One `pread(2)` at `offset`, or one `read(2)` when `offset` is nil; 0 at the end of the file.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int? = nil) -> SyscallResult {
        if let code = injected(.read) { return .failure(code) }
        if let offset {
            return retryingEINTR { Glibc.pread(fd, buffer.baseAddress, buffer.count, off_t(offset)) }
        }
        return retryingEINTR { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    static func fsync(_ fd: Int32) -> SyscallResult {
        if let code = injected(.sync) { return .failure(code) }
        return retryingEINTR { Int(Glibc.fsync(fd)) }
    }

    static func rename(_ from: String, _ to: String) -> SyscallResult {
        if let code = injected(.rename) { return .failure(code) }
        return retryingEINTR { Int(Glibc.rename(from, to)) }
    }

    static func unlink(_ path: String) -> SyscallResult {
        if let code = injected(.unlink) { return .failure(code) }
        return retryingEINTR { Int(Glibc.unlink(path)) }
    }

    /// link(2): a second name for `existing`; fails with EEXIST when `new` exists.
    static func link(_ existing: String, _ new: String) -> SyscallResult {
        if let code = injected(.link) { return .failure(code) }
        return retryingEINTR { Int(Glibc.link(existing, new)) }
    }

    /// flock(2) with `operation` (`LOCK_EX | LOCK_NB`, `LOCK_UN`, ...).
    static func lock(_ fd: Int32, _ operation: Int32) -> SyscallResult {
        if let code = injected(.lock) { return .failure(code) }
        return retryingEINTR { Int(flock(fd, operation)) }
    }

    /// fstat(2) of an open file.
    static func status(of fd: Int32) -> Result<stat, SyscallError> {
        if let code = injected(.fileStatus) { return .failure(SyscallError(errno: code)) }
        var info = stat()
        if case .failure(let code) = retryingEINTR({ Int(fstat(fd, &info)) }) {
            return .failure(SyscallError(errno: code))
        }
        return .success(info)
    }

    /// stat(2) of a path, following links.
    static func status(ofPath path: String) -> Result<stat, SyscallError> {
        if let code = injected(.pathStatus) { return .failure(SyscallError(errno: code)) }
        var info = stat()
        if case .failure(let code) = retryingEINTR({ Int(stat(path, &info)) }) {
            return .failure(SyscallError(errno: code))
        }
        return .success(info)
    }

    /// The soft file-size limit (`ulimit -f`), or nil when there is none or it cannot be read.
    static func fileSizeLimit() -> rlim_t? {
        if injected(.limit) != nil { return nil }
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else {
            return nil
        }
        return limit.rlim_cur
    }

    /// Reserves the first `bytes` of an open file's blocks (fallocate): 0, or the errno.
    static func reserve(_ fd: Int32, bytes: Int) -> Int32 {
        if let code = injected(.allocate) { return code }
        return perf_fallocate(fd, Int64(bytes))
    }

    /// mmap(2) of `bytes` read-write: of `fd` (-1 with `MAP_ANONYMOUS` in `flags`), at `address`
    /// when `flags` has `MAP_FIXED`.
    static func map(
        _ address: UnsafeMutableRawPointer? = nil, bytes: Int, flags: Int32, fd: Int32 = -1
    ) -> Result<UnsafeMutableRawPointer, SyscallError> {
        if let code = injected(.map) { return .failure(SyscallError(errno: code)) }
        guard let mapped = mmap(address, bytes, PROT_READ | PROT_WRITE, flags, fd, 0), mapped != MAP_FAILED else {
            return .failure(SyscallError(errno: errno))
        }
        return .success(mapped)
    }

    static func unmap(_ base: UnsafeMutableRawPointer, bytes: Int) {
        _ = munmap(base, bytes)
    }

    /// msync(2) with `MS_SYNC`: 0, or the errno.
    static func synchronize(_ base: UnsafeMutableRawPointer, bytes: Int) -> Int32 {
        if let code = injected(.sync) { return code }
        return msync(base, bytes, MS_SYNC) == 0 ? 0 : errno
    }

    /// mincore(2): one byte per page of `base..<base+length` into `pages`; false when it failed.
    static func residentPages(_ base: UnsafeMutableRawPointer, length: Int, into pages: inout [UInt8]) -> Bool {
        if injected(.resident) != nil { return false }
        return mincore(base, length, &pages) == 0
    }
}
