// The one clock seam of PerfCore: durations from CLOCK_MONOTONIC, wall time only on slow paths.
import CPerfShims
import Synchronization

/// A source of time for span expiry, watchdogs and anything else that schedules.
///
/// Durations are always measured on CLOCK_MONOTONIC: `ContinuousClock` reads CLOCK_BOOTTIME on
/// Linux, which jumps forward across a host suspend and would blame the program for it.
/// Tests inject a ``ManualClock`` and advance it instead of sleeping.
public protocol PerfClock: Sendable {
    /// Nanoseconds on CLOCK_MONOTONIC (or the test's notion of it).
    func monotonicNanos() -> UInt64
    /// Nanoseconds since the Unix epoch, for timestamps written to files.
    func wallNanos() -> UInt64
}

/// The real clock: `clock_gettime(CLOCK_MONOTONIC)` through the vDSO.
public struct SystemClock: PerfClock {
    public init() {}

    @inlinable
    public func monotonicNanos() -> UInt64 { perf_monotonic_ns() }

    public func wallNanos() -> UInt64 { perf_realtime_ns() }

    /// CLOCK_BOOTTIME − CLOCK_MONOTONIC: grows when the host was suspended.
    public func suspendedNanos() -> UInt64 {
        let boot = perf_boottime_ns()
        let mono = perf_monotonic_ns()
        return boot > mono ? boot - mono : 0
    }
}

/// A clock that moves only when a test says so.
public final class ManualClock: PerfClock {
    private let state: Mutex<(mono: UInt64, wall: UInt64)>

    /// Creates a clock at the given monotonic and wall readings.
    public init(monotonicNanos: UInt64 = 1_000_000_000, wallNanos: UInt64 = 1_796_000_000_000_000_000) {
        state = Mutex((monotonicNanos, wallNanos))
    }

    public func monotonicNanos() -> UInt64 { state.withLock { $0.mono } }

    public func wallNanos() -> UInt64 { state.withLock { $0.wall } }

    /// Moves both readings forward.
    public func advance(byNanos delta: UInt64) {
        state.withLock {
            $0.mono += delta
            $0.wall += delta
        }
    }

    /// Moves both readings forward by milliseconds.
    public func advance(byMilliseconds ms: UInt64) { advance(byNanos: ms * 1_000_000) }
}
