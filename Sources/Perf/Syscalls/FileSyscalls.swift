// The Perf module's one syscall seam for files: EINTR retried by the package's one helper
// (`retryingEINTR`, in JournalKit), faults injectable in debug builds. The ledger writer, reader
// and shared state, the diagnostic files and the report builder call the kernel only through here
// (the watchdog's /proc reads and signals are its own concern).
import CPerfShims
import Glibc
import JournalKit
import Synchronization

/// Every file syscall Perf makes goes through here, so tests can force ENOSPC, short writes and
/// failed opens, reads, renames or directory creation without a full disk.
struct FileSyscalls: Sendable {
    /// The production seam, without injected faults.
    static let live = FileSyscalls()

    #if DEBUG
        /// Faults to inject, consumed in order; nil in production use.
        let faults: SyscallFaultInjector?

        init(faults: SyscallFaultInjector? = nil) { self.faults = faults }
    #else
        init() {}
    #endif

    func open(_ path: String, flags: Int32, mode: mode_t) -> SyscallResult {
        #if DEBUG
            if let errno = faults?.take(.open) { return .failure(errno) }
        #endif
        return retryingEINTR { Int(Glibc.open(path, flags, mode)) }
    }

    /// One `write(2)` of the whole buffer; a short count is returned as is for the caller to judge.
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> SyscallResult {
        #if DEBUG
            faults?.stallIfAsked()
            if let fault = faults?.takeWrite() {
                switch fault {
                case .errno(let errno): return .failure(errno)
                case .short:
                    // Really write half the line, as a full disk would, so the reader sees the damage.
                    let half = max(1, bytes.count / 2)
                    return retryingEINTR { Glibc.write(fd, bytes.baseAddress, half) }
                }
            }
        #endif
        return retryingEINTR { Glibc.write(fd, bytes.baseAddress, bytes.count) }
    }

    /// Writes all of `bytes`, `write(2)` after `write(2)` (EINTR retried): 0, or the errno that
    /// stopped it (`EIO` for a write that took nothing).
    func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        var offset = 0
        while offset < bytes.count {
            switch write(fd, UnsafeRawBufferPointer(rebasing: bytes[offset...])) {
            case .success(let written) where written > 0: offset += written
            case .success: return EIO
            case .failure(let errno): return errno
            }
        }
        return 0
    }

    /// One `read(2)` into `buffer`; 0 at the end of the file.
    func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> SyscallResult {
        #if DEBUG
            if let errno = faults?.take(.read) { return .failure(errno) }
        #endif
        return retryingEINTR { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// `mkdir(2)`; an existing directory is success.
    func makeDirectory(_ path: String, mode: mode_t) -> SyscallResult {
        #if DEBUG
            if let errno = faults?.take(.mkdir) { return .failure(errno) }
        #endif
        let result = retryingEINTR { Int(Glibc.mkdir(path, mode)) }
        return result == .failure(EEXIST) ? .success(0) : result
    }

    /// Size and kind of a path, following links; the errno when it cannot be examined.
    func status(_ path: String) -> Result<(size: Int, isDirectory: Bool), SyscallError> {
        var info = stat()
        guard fstatat(AT_FDCWD, path, &info, 0) == 0 else { return .failure(SyscallError(errno: errno)) }
        return .success((Int(info.st_size), (info.st_mode & S_IFMT) == S_IFDIR))
    }

    /// Whether `access(2)` grants `mode` on `path`.
    func isAccessible(_ path: String, _ mode: Int32) -> Bool {
        Glibc.access(path, mode) == 0
    }

    /// `access(2)`, with the errno when it refuses.
    func access(_ path: String, _ mode: Int32) -> SyscallResult {
        Glibc.access(path, mode) == 0 ? .success(0) : .failure(errno)
    }

    /// The names in a directory (without `.` and `..`), in directory order.
    func listDirectory(_ path: String) -> Result<[String], SyscallError> {
        #if DEBUG
            if let errno = faults?.take(.open) { return .failure(SyscallError(errno: errno)) }
        #endif
        guard let directory = Glibc.opendir(path) else { return .failure(SyscallError(errno: errno)) }
        defer { Glibc.closedir(directory) }
        var names: [String] = []
        while let entry = Glibc.readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return .success(names)
    }

    func rename(_ from: String, _ to: String) -> SyscallResult {
        #if DEBUG
            if let errno = faults?.take(.rename), errno != 0 { return .failure(errno) }
        #endif
        return retryingEINTR { Int(Glibc.rename(from, to)) }
    }

    func unlink(_ path: String) -> SyscallResult {
        retryingEINTR { Int(Glibc.unlink(path)) }
    }

    /// Size and link count of an open file.
    func fstat(_ fd: Int32) -> (size: Int, links: Int)? {
        var info = stat()
        guard Glibc.fstat(fd, &info) == 0 else { return nil }
        return (Int(info.st_size), Int(info.st_nlink))
    }

    /// fstat(2) of an open file, whole.
    func fileStatus(_ fd: Int32) -> Result<stat, SyscallError> {
        #if DEBUG
            if let errno = faults?.take(.fileStatus), errno != 0 { return .failure(SyscallError(errno: errno)) }
        #endif
        var info = stat()
        if case .failure(let code) = retryingEINTR({ Int(Glibc.fstat(fd, &info)) }) {
            return .failure(SyscallError(errno: code))
        }
        return .success(info)
    }

    /// stat(2) of a path, following links, whole.
    func pathStatus(_ path: String) -> Result<stat, SyscallError> {
        #if DEBUG
            if let errno = faults?.take(.pathStatus), errno != 0 { return .failure(SyscallError(errno: errno)) }
        #endif
        var info = stat()
        if case .failure(let code) = retryingEINTR({ Int(stat(path, &info)) }) {
            return .failure(SyscallError(errno: code))
        }
        return .success(info)
    }

    /// flock(2) with `operation` (`LOCK_EX`, `LOCK_UN`, ...).
    func lock(_ fd: Int32, _ operation: Int32) -> SyscallResult {
        #if DEBUG
            if let errno = faults?.take(.lock), errno != 0 { return .failure(errno) }
        #endif
        return retryingEINTR { Int(flock(fd, operation)) }
    }

    /// The soft file-size limit (`ulimit -f`), or nil when there is none or it cannot be read.
    func fileSizeLimit() -> rlim_t? {
        #if DEBUG
            if faults?.take(.limit) != nil { return nil }
        #endif
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else {
            return nil
        }
        return limit.rlim_cur
    }

    /// mmap(2) of the first `bytes` of `fd`, read-write and `MAP_SHARED`.
    func mapShared(_ fd: Int32, bytes: Int) -> Result<UnsafeMutableRawPointer, SyscallError> {
        #if DEBUG
            if let errno = faults?.take(.map), errno != 0 { return .failure(SyscallError(errno: errno)) }
        #endif
        guard let mapped = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), mapped != MAP_FAILED else {
            return .failure(SyscallError(errno: errno))
        }
        return .success(mapped)
    }

    func unmap(_ base: UnsafeMutableRawPointer, bytes: Int) {
        _ = munmap(base, bytes)
    }

    /// ftruncate(2): sets the file's size to `bytes`.
    func setSize(_ fd: Int32, bytes: Int) -> SyscallResult {
        #if DEBUG
            if let errno = faults?.take(.size), errno != 0 { return .failure(errno) }
        #endif
        return retryingEINTR { Int(ftruncate(fd, off_t(bytes))) }
    }

    /// Reserves the first `bytes` of an open file's blocks (fallocate, mode 0), so writes through a
    /// shared mapping of them can never meet a full disk (which would be SIGBUS, not an errno).
    func reserve(_ fd: Int32, bytes: Int) -> SyscallResult {
        #if DEBUG
            if let errno = faults?.take(.reserve), errno != 0 { return .failure(errno) }
        #endif
        let code = perf_fallocate(fd, Int64(bytes))
        return code == 0 ? .success(0) : .failure(code)
    }

    /// pread(2) until `buffer` is full or the file ends; the bytes read, or the errno.
    func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> SyscallResult {
        #if DEBUG
            if let errno = faults?.take(.read), errno != 0 { return .failure(errno) }
        #endif
        var done = 0
        while done < buffer.count {
            switch retryingEINTR({ pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done)) }) {
            case .success(0): return .success(done)
            case .success(let count): done += count
            case .failure(let errno): return .failure(errno)
            }
        }
        return .success(done)
    }

    /// pwrite(2) of all of `bytes` at `offset`; the errno of a failure.
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int) -> SyscallResult {
        #if DEBUG
            if let fault = faults?.takeWrite() {
                switch fault {
                case .errno(let errno): return .failure(errno)
                case .short: return .success(0)
                }
            }
        #endif
        return retryingEINTR { pwrite(fd, bytes.baseAddress, bytes.count, off_t(offset)) }
    }

    /// The last byte of an open file, to detect a line torn by a kill.
    func lastByte(_ fd: Int32, size: Int) -> UInt8? {
        guard size > 0 else { return nil }
        var byte: UInt8 = 0
        let result = retryingEINTR { pread(fd, &byte, 1, off_t(size - 1)) }
        return result == .success(1) ? byte : nil
    }

    /// Opens `path` read-only; the descriptor, or the errno.
    func openForReading(_ path: String) -> SyscallResult {
        open(path, flags: O_RDONLY | O_CLOEXEC, mode: 0)
    }

    func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }
}

#if DEBUG
    /// Scripted failures for the ledger's syscalls (debug builds only).
    final class SyscallFaultInjector: Sendable {
        enum Operation: Hashable {
            case open, rename, read, mkdir, fileStatus, pathStatus, lock, limit, map, size, reserve
        }
        enum WriteFault: Equatable {
            case errno(Int32)
            case short
        }

        private let state = Mutex<(writes: [WriteFault], errnos: [Operation: [Int32]])>(([], [:]))
        private let writeStallNanos = Atomic<UInt64>(0)
        /// Writes that have entered the stall, so a test can wait until one is stuck in it.
        let stalledWrites = Atomic<Int>(0)

        init() {}

        /// The next `count` writes fail with `errno` (ENOSPC by default).
        func failWrites(_ count: Int, errno: Int32 = ENOSPC) {
            state.withLock { $0.writes += Array(repeating: .errno(errno), count: count) }
        }

        /// The next write writes only half of its line.
        func shortWrite() {
            state.withLock { $0.writes.append(.short) }
        }

        /// The next `count` calls of `operation` fail with `errno`.
        func fail(_ operation: Operation, _ count: Int, errno: Int32) {
            state.withLock { $0.errnos[operation, default: []] += Array(repeating: errno, count: count) }
        }

        /// The next calls of `operation` in order: each fails with its errno, or goes through
        /// for a 0 (renames, locks, stats and maps), so a later call can fail alone.
        func script(_ operation: Operation, _ errnos: [Int32]) {
            state.withLock { $0.errnos[operation, default: []] += errnos }
        }

        /// How many injected failures of `operation` are still to come.
        func pending(_ operation: Operation) -> Int {
            state.withLock { $0.errnos[operation]?.count ?? 0 }
        }

        /// Every write from now on sleeps `nanos` first, as on a stalled disk; 0 lifts the stall.
        func stallWrites(nanos: UInt64) {
            writeStallNanos.store(nanos, ordering: .relaxed)
        }

        func stallIfAsked() {
            let nanos = writeStallNanos.load(ordering: .relaxed)
            guard nanos > 0 else { return }
            stalledWrites.add(1, ordering: .relaxed)
            var request = timespec(tv_sec: Int(nanos / 1_000_000_000), tv_nsec: Int(nanos % 1_000_000_000))
            var remaining = timespec()
            while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
        }

        /// Drops the failures still to come: the fault is lifted.
        func clear() {
            state.withLock { $0 = ([], [:]) }
        }

        func takeWrite() -> WriteFault? {
            state.withLock { $0.writes.isEmpty ? nil : $0.writes.removeFirst() }
        }

        func take(_ operation: Operation) -> Int32? {
            state.withLock { state in
                guard var pending = state.errnos[operation], !pending.isEmpty else { return nil }
                let errno = pending.removeFirst()
                state.errnos[operation] = pending
                return errno
            }
        }
    }
#endif
