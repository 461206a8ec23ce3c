// The clock spans are timed with: the TSC on the CLOCK_MONOTONIC timeline where it is invariant and
// the kernel trusts it, CLOCK_MONOTONIC everywhere else. Durations and ordering only: every
// timestamp written to a file still comes from PerfClock.wallNanos().
import CPerfShims
import Dispatch
import Glibc
import Synchronization

/// What a ``SpanClock`` reads right now.
public enum SpanClockSource: Sendable, Equatable, CustomStringConvertible {
    /// The scaled TSC.
    case tsc
    /// CLOCK_MONOTONIC while the first calibration interval runs (or runs again after a drift).
    case calibrating(reason: String)
    /// CLOCK_MONOTONIC for good: the host is not eligible, or the fallback was forced.
    case monotonic(reason: String)

    public var description: String {
        switch self {
        case .tsc: "tsc"
        case .calibrating(let reason): "CLOCK_MONOTONIC (calibrating: \(reason))"
        case .monotonic(let reason): "CLOCK_MONOTONIC (\(reason))"
        }
    }
}

/// Calibrates the TSC against CLOCK_MONOTONIC and publishes the conversion that
/// `perf_fast_ns()` reads inline (a sequence lock in C, so a re-check never blocks a reader).
///
/// At ``start(recheckIntervalSeconds:)`` it checks eligibility (clocksource `tsc`, CPU flags
/// `constant_tsc` and `nonstop_tsc`, `PERF_CLOCK` not `monotonic`) and takes a tight
/// (TSC, CLOCK_MONOTONIC) pair. Readers keep getting CLOCK_MONOTONIC until a re-check at least
/// `minimumIntervalNanos` later has measured the ratio; from then on every re-check rebases onto a
/// fresh pair with the long-term ratio (the step it makes is the ratio's error over one interval)
/// and falls back to CLOCK_MONOTONIC, recalibrating from scratch, if the ratio over the last
/// interval strays more than `maximumDrift` from the published one.
public final class SpanClock: @unchecked Sendable {
    // @unchecked: `state` points at C memory written only by perf_fast_clock_publish under
    // `calibration`'s lock and read through the C sequence lock.

    /// The process's span clock, behind `perf_fast_ns()`.
    public static let shared = SpanClock(state: perf_fast_clock_shared(), host: .system)

    /// The published parameters.
    @usableFromInline package let state: UnsafeMutablePointer<perf_fast_clock>
    private let ownsState: Bool
    private let host: SpanClockHost
    /// Durations over at least this long calibrate (the pair's ±~20 ns is then < 1e-7 of it).
    public let minimumIntervalNanos: UInt64
    /// The ratio over one re-check interval may differ this much from the published one.
    public let maximumDrift: Double

    private struct Calibration {
        var started = false
        var source = SpanClockSource.calibrating(reason: "not started")
        var anchor: (tsc: UInt64, mono: UInt64)?
        var last: (tsc: UInt64, mono: UInt64)?
        var nanosPerTick: Double?
        var largestStepNanos: Int64 = 0
        var timer: (any DispatchSourceTimer)?
    }
    private let calibration = Mutex(Calibration())

    private static let shift: UInt32 = 32

    /// A clock over its own parameters (tests), or over `state` (the shared one).
    public init(
        state: UnsafeMutablePointer<perf_fast_clock>? = nil, host: SpanClockHost,
        minimumIntervalNanos: UInt64 = 500_000_000, maximumDrift: Double = 5e-4
    ) {
        if let state {
            self.state = state
            ownsState = false
        } else {
            self.state = .allocate(capacity: 1)
            self.state.initialize(to: perf_fast_clock())
            ownsState = true
        }
        self.host = host
        self.minimumIntervalNanos = minimumIntervalNanos
        self.maximumDrift = maximumDrift
    }

    deinit {
        calibration.withLock { $0.timer?.cancel() }
        if ownsState { state.deallocate() }
    }

    /// Nanoseconds on the CLOCK_MONOTONIC timeline: the scaled TSC once calibrated.
    @inlinable
    public func nanos() -> UInt64 { perf_fast_ns_from(state) }

    /// What ``nanos()`` reads now.
    public var source: SpanClockSource { calibration.withLock { $0.source } }

    /// The nanoseconds per TSC tick in use, once calibrated.
    public var nanosPerTick: Double? { calibration.withLock { $0.nanosPerTick } }

    /// The largest jump (either sign) a re-check's rebase has made, in ns.
    public var largestStepNanos: Int64 { calibration.withLock { $0.largestStepNanos } }

    /// Checks eligibility, takes the first pair and, given an interval, re-checks on a utility
    /// queue that often (never a host thread). Later calls do nothing.
    public func start(recheckIntervalSeconds: Int? = 1) {
        calibration.withLock { calibration in
            guard !calibration.started else { return }
            calibration.started = true
            begin(&calibration, recheckIntervalSeconds: recheckIntervalSeconds, reason: "first interval")
        }
    }

    /// Undoes ``forceMonotonic(reason:)``: calibrates afresh (CLOCK_MONOTONIC until the first
    /// interval has passed), if the host is eligible.
    public func allowTSC(recheckIntervalSeconds: Int? = 1) {
        calibration.withLock { calibration in
            calibration.started = true
            guard case .monotonic = calibration.source else { return }
            begin(&calibration, recheckIntervalSeconds: recheckIntervalSeconds, reason: "resumed")
        }
    }

    /// Tests: starts without a timer from a given first pair, so re-checks can be fed pairs.
    package func start(anchor: (tsc: UInt64, mono: UInt64)) {
        calibration.withLock { calibration in
            calibration.started = true
            begin(&calibration, recheckIntervalSeconds: nil, reason: "first interval", anchor: anchor)
        }
    }

    private func begin(
        _ calibration: inout Calibration, recheckIntervalSeconds: Int?, reason: String,
        anchor: (tsc: UInt64, mono: UInt64)? = nil
    ) {
        if let ineligible = host.ineligibility() {
            calibration.source = .monotonic(reason: ineligible)
            return
        }
        calibration.anchor = anchor ?? Self.pair()
        calibration.last = nil
        calibration.nanosPerTick = nil
        calibration.source = .calibrating(reason: reason)
        guard let interval = recheckIntervalSeconds, calibration.timer == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "perf.span-clock", qos: .utility))
        timer.schedule(
            deadline: .now() + .seconds(interval), repeating: .seconds(interval), leeway: .milliseconds(250))
        timer.setEventHandler { [weak self] in self?.recheck() }
        timer.resume()
        calibration.timer = timer
    }

    /// Forces CLOCK_MONOTONIC from now on (readers switch at their next read).
    public func forceMonotonic(reason: String) {
        calibration.withLock { calibration in
            calibration.started = true
            calibration.timer?.cancel()
            calibration.timer = nil
            calibration.nanosPerTick = nil
            calibration.source = .monotonic(reason: reason)
            perf_fast_clock_publish(state, 0, 0, 0, 0)
        }
    }

    /// One calibration step: enable, rebase, or fall back. The timer calls it; tests may too.
    public func recheck() { recheck(now: Self.pair()) }

    /// One calibration step from a given (TSC, CLOCK_MONOTONIC) pair (tests feed their own).
    package func recheck(now: (tsc: UInt64, mono: UInt64)) {
        calibration.withLock { step(&$0, now: now) }
    }

    /// Waits (sleeping) until the first interval has passed and re-checks: for benchmarks and
    /// tests that need the TSC path now rather than a second after start.
    public func calibrateNow() {
        start()
        guard let anchor = calibration.withLock({ $0.anchor }), case .calibrating = source else { return }
        let elapsed = perf_monotonic_ns() - anchor.mono
        if elapsed < minimumIntervalNanos {
            var remaining = timespec(
                tv_sec: Int((minimumIntervalNanos - elapsed) / 1_000_000_000),
                tv_nsec: Int((minimumIntervalNanos - elapsed) % 1_000_000_000))
            var left = timespec()
            while nanosleep(&remaining, &left) != 0 { remaining = left }
        }
        recheck()
    }

    private func step(_ calibration: inout Calibration, now: (tsc: UInt64, mono: UInt64)) {
        guard calibration.started, let anchor = calibration.anchor else { return }
        if case .monotonic = calibration.source { return }
        guard now.tsc > anchor.tsc, now.mono > anchor.mono else {
            fallBack(&calibration, now: now, reason: "TSC or CLOCK_MONOTONIC went backwards")
            return
        }
        if let ratio = calibration.nanosPerTick, let last = calibration.last {
            guard now.tsc > last.tsc, now.mono > last.mono else {
                fallBack(&calibration, now: now, reason: "TSC or CLOCK_MONOTONIC went backwards")
                return
            }
            // Too soon after the last one (an extra re-check beside the timer's): the pairs' own
            // ±tens of ns would read as drift. Keep what is published.
            guard now.mono - last.mono >= minimumIntervalNanos / 10 else { return }
            let interval = Double(now.mono - last.mono) / Double(now.tsc - last.tsc)
            guard abs(interval / ratio - 1) <= maximumDrift else {
                fallBack(
                    &calibration, now: now,
                    reason: "ratio moved \(Int((interval / ratio - 1) * 1e6)) ppm")
                return
            }
            let predicted = Int64(bitPattern: last.mono) + Int64((Double(now.tsc - last.tsc) * ratio).rounded())
            let step = Int64(bitPattern: now.mono) - predicted
            if abs(step) > abs(calibration.largestStepNanos) { calibration.largestStepNanos = step }
        } else if now.mono - anchor.mono < minimumIntervalNanos {
            return
        }
        let ratio = Double(now.mono - anchor.mono) / Double(now.tsc - anchor.tsc)
        let mult = (ratio * Double(UInt64(1) << Self.shift)).rounded()
        guard mult >= 1, mult < Double(UInt64(1) << 40) else {
            fallBack(&calibration, now: now, reason: "implausible ratio \(ratio) ns per tick")
            return
        }
        calibration.nanosPerTick = ratio
        calibration.last = now
        calibration.source = .tsc
        perf_fast_clock_publish(state, UInt64(mult), Self.shift, now.tsc, now.mono)
    }

    /// Back to CLOCK_MONOTONIC, and calibrate again from this pair.
    private func fallBack(_ calibration: inout Calibration, now: (tsc: UInt64, mono: UInt64), reason: String) {
        perf_fast_clock_publish(state, 0, 0, 0, 0)
        calibration.anchor = now
        calibration.last = nil
        calibration.nanosPerTick = nil
        calibration.source = .calibrating(reason: reason)
    }

    /// A (TSC, CLOCK_MONOTONIC) pair, the narrowest of 16 tries.
    static func pair() -> (tsc: UInt64, mono: UInt64) {
        var tsc: UInt64 = 0
        var mono: UInt64 = 0
        _ = perf_fast_clock_pair(16, &tsc, &mono)
        return (tsc, mono)
    }
}
