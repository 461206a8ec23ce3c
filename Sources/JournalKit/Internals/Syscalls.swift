// The syscall seam of JournalKit: every open/write/sync/unlink goes through here, EINTR is
// retried by the package's one helper (`retryingEINTR`), and debug builds can inject faults.
import Glibc

/// The kinds of syscall the seam routes (and a debug build can make fail).
enum SyscallOperation: Hashable, Sendable {
    case open, write, sync, unlink, rename, read
    /// The segment preparer's header write, apart from appends so a test can fail it alone.
    case preparedHeader
}

/// Thin wrappers over the syscalls the journal makes.
///
/// Each returns `Result` instead of throwing so callers on the append path decide how a
/// failure maps to a ``JournalError`` (a failed write poisons a segment; a failed unlink is
/// retried later). In debug builds a ``FaultInjection`` may replace a call's outcome.
struct Syscalls: Sendable {
    #if DEBUG
        /// Faults to inject, or nil for the real syscalls.
        var faults: FaultInjection?
    #endif

    /// The real syscalls.
    static let live = Syscalls()

    /// Runs `body` unless an injected fault for `operation` replaces it.
    @inline(__always)
    private func perform(_ operation: SyscallOperation, _ body: () -> Int) -> Result<Int, SyscallError> {
        #if DEBUG
            faults?.runInterleavings(before: operation)
        #endif
        let result = retryingEINTR {
            #if DEBUG
                if let faults, let code = faults.takeErrno(for: operation) {
                    Glibc.errno = code
                    return -1
                }
            #endif
            return body()
        }
        switch result {
        case .success(let value): return .success(value)
        case .failure(let code): return .failure(SyscallError(errno: code))
        }
    }

    func open(_ path: String, flags: Int32, mode: mode_t = 0o600) -> Result<Int32, SyscallError> {
        perform(.open) { Int(Glibc.open(path, flags, mode)) }.map { Int32($0) }
    }

    /// One syscall per frame, so an `O_APPEND` descriptor never interleaves entries.
    ///
    /// A frame that fits `scratch` is copied there and written with `write(2)`, which costs
    /// less than `writev(2)` for small entries; a larger one goes out with `writev(2)`.
    func writeFrame(
        _ descriptor: Int32, header: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer,
        scratch: UnsafeMutableRawBufferPointer, operation: SyscallOperation = .write
    ) -> Result<Int, SyscallError> {
        #if DEBUG
            if operation == .write, let faults, let keep = faults.takeShortWrite() {
                return .success(writePrefix(descriptor, header: header, payload: payload, count: keep))
            }
        #endif
        let total = header.count + payload.count
        if total <= scratch.count, let base = scratch.baseAddress {
            base.copyMemory(from: header.baseAddress!, byteCount: header.count)
            if let payloadBase = payload.baseAddress {
                (base + header.count).copyMemory(from: payloadBase, byteCount: payload.count)
            }
            return perform(operation) { Glibc.write(descriptor, base, total) }
        }
        return perform(operation) {
            withUnsafeTemporaryAllocation(of: iovec.self, capacity: 2) { vectors in
                vectors[0] = iovec(
                    iov_base: UnsafeMutableRawPointer(mutating: header.baseAddress), iov_len: header.count)
                vectors[1] = iovec(
                    iov_base: UnsafeMutableRawPointer(mutating: payload.baseAddress), iov_len: payload.count)
                return Glibc.writev(descriptor, vectors.baseAddress, 2)
            }
        }
    }

    func fdatasync(_ descriptor: Int32) -> Result<Int, SyscallError> {
        perform(.sync) { Int(Glibc.fdatasync(descriptor)) }
    }

    func fsync(_ descriptor: Int32) -> Result<Int, SyscallError> {
        perform(.sync) { Int(Glibc.fsync(descriptor)) }
    }

    func unlink(_ path: String) -> Result<Int, SyscallError> {
        perform(.unlink) { Int(Glibc.unlink(path)) }
    }

    func rename(_ from: String, _ to: String) -> Result<Int, SyscallError> {
        perform(.rename) { Int(Glibc.rename(from, to)) }
    }

    func mkdir(_ path: String, mode: mode_t) -> Result<Int, SyscallError> {
        perform(.open) { Int(Glibc.mkdir(path, mode)) }
    }

    func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Result<Int, SyscallError> {
        perform(.read) { Glibc.read(descriptor, buffer.baseAddress, buffer.count) }
    }

    /// The size of an open file.
    func size(of descriptor: Int32) -> Result<Int, SyscallError> {
        var info = stat()
        return perform(.read) { Int(fstat(descriptor, &info)) }.map { _ in Int(info.st_size) }
    }

    func close(_ descriptor: Int32) {
        // close(2) must not be retried on EINTR on Linux: the descriptor is already released.
        _ = Glibc.close(descriptor)
    }

    #if DEBUG
        /// Writes only the first `count` bytes of a frame, as a full disk would.
        private func writePrefix(
            _ descriptor: Int32, header: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer, count: Int
        ) -> Int {
            let bytes = Array(header) + Array(payload)
            let kept = min(count, bytes.count)
            return bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, kept) }
        }
    #endif
}
