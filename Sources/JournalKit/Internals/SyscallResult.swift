// The one EINTR retry of the package, and the result type every syscall seam returns. It lives in
// JournalKit, the lowest Swift module, so the seams of JournalKit, PerfCore and Perf share it.
import Glibc

/// The result of one syscall: a non-negative value, or the errno it failed with.
@usableFromInline
package enum SyscallResult: Equatable, Sendable {
    case success(Int)
    case failure(Int32)
}

/// A failed syscall's errno, as an `Error` for `Result` and typed throws.
package struct SyscallError: Error, Equatable, Sendable {
    package let errno: Int32

    package init(errno: Int32) { self.errno = errno }
}

/// Calls `call` again while it fails with EINTR: its non-negative result, or the errno it failed
/// with. A signal handled on this thread (the watchdog's sampler, a host's own) then never turns
/// into a spurious failure. Not for close(2): on Linux the descriptor is released even on EINTR.
@inlinable @inline(__always)
package func retryingEINTR(_ call: () -> Int) -> SyscallResult {
    while true {
        let result = call()
        if result >= 0 { return .success(result) }
        let code = Glibc.errno
        if code != EINTR { return .failure(code) }
    }
}
