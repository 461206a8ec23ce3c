// The ledger's syscall seam: EINTR retried in one place, faults injectable in debug builds.
import Glibc
import Synchronization

/// The result of one syscall: a non-negative value, or the errno it failed with.
enum SyscallResult: Equatable {
    case success(Int)
    case failure(Int32)
}

/// Every syscall the ledger makes goes through here, so tests can force ENOSPC, short writes and
/// failed opens or renames without a full disk.
struct LedgerSyscalls: Sendable {
    #if DEBUG
        /// Faults to inject, consumed in order; nil in production use.
        let faults: LedgerFaultInjector?

        init(faults: LedgerFaultInjector? = nil) { self.faults = faults }
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

    func rename(_ from: String, _ to: String) -> SyscallResult {
        #if DEBUG
            if let errno = faults?.take(.rename) { return .failure(errno) }
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

    /// The last byte of an open file, to detect a line torn by a kill.
    func lastByte(_ fd: Int32, size: Int) -> UInt8? {
        guard size > 0 else { return nil }
        var byte: UInt8 = 0
        let result = retryingEINTR { pread(fd, &byte, 1, off_t(size - 1)) }
        return result == .success(1) ? byte : nil
    }

    func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    private func retryingEINTR(_ call: () -> Int) -> SyscallResult {
        while true {
            let result = call()
            if result >= 0 { return .success(result) }
            if errno != EINTR { return .failure(errno) }
        }
    }
}

#if DEBUG
    /// Scripted failures for the ledger's syscalls (debug builds only).
    final class LedgerFaultInjector: Sendable {
        enum Operation: Hashable { case open, rename }
        enum WriteFault: Equatable {
            case errno(Int32)
            case short
        }

        private let state = Mutex<(writes: [WriteFault], errnos: [Operation: [Int32]])>(([], [:]))

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
