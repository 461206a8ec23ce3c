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
/// `minimumIntervalNanos` later has measured the ratio; from then on every re-check measures the
/// offset between the span clock and CLOCK_MONOTONIC and slews it out over the next interval
/// (a rate change of at most ``maximumSlew``), and falls back to CLOCK_MONOTONIC, recalibrating from
/// scratch, if the ratio over the last interval strays more than `maximumDrift` from the long-term one.
///
/// The span clock never steps backwards: a re-check continues from the value the old parameters
/// give at its pair's TSC reading, and the switch from CLOCK_MONOTONIC starts no earlier than the
/// latest CLOCK_MONOTONIC read of its pair. (Rebasing straight onto each fresh pair stepped the clock
/// back by the pair's error, tens of ns: a span straddling a re-check measured 0 ns, and a span with
/// a budget of 0 went unrecorded.)
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
        var anchor: (tsc: UInt64, mono: UInt64, width: UInt64)?
        var last: (tsc: UInt64, mono: UInt64, width: UInt64)?
        var nanosPerTick: Double?
        var largestOffsetNanos: Int64 = 0
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

    /// The largest offset (either sign; positive: the span clock was behind) between the span clock
    /// and CLOCK_MONOTONIC that a re-check found and slewed out, in ns.
    public var largestOffsetNanos: Int64 { calibration.withLock { $0.largestOffsetNanos } }

    /// The largest change of rate a re-check makes to slew an offset out: 100 ppm, a tenth of the
    /// 0.1 % that span durations must agree with CLOCK_MONOTONIC within.
    public static let maximumSlew = 1e-4

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
    package func start(anchor: (tsc: UInt64, mono: UInt64), width: UInt64 = 0) {
        calibration.withLock { calibration in
            calibration.started = true
            begin(
                &calibration, recheckIntervalSeconds: nil, reason: "first interval",
                anchor: (anchor.tsc, anchor.mono, width))
        }
    }

    private func begin(
        _ calibration: inout Calibration, recheckIntervalSeconds: Int?, reason: String,
        anchor: (tsc: UInt64, mono: UInt64, width: UInt64)? = nil
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
    /// The pair is read under the calibration lock: two re-checks at once (the timer and a
    /// ``calibrateNow()``) would otherwise step with pairs out of order and read it as time going
    /// backwards.
    public func recheck() {
        calibration.withLock { step(&$0, now: Self.pair()) }
    }

    /// One calibration step from a given (TSC, CLOCK_MONOTONIC) pair whose two CLOCK_MONOTONIC reads
    /// were `width` ns apart (tests feed their own).
    package func recheck(now: (tsc: UInt64, mono: UInt64), width: UInt64 = 0) {
        calibration.withLock { step(&$0, now: (now.tsc, now.mono, width)) }
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

    private func step(_ calibration: inout Calibration, now: (tsc: UInt64, mono: UInt64, width: UInt64)) {
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
        } else if now.mono - anchor.mono < minimumIntervalNanos {
            return
        }
        let ratio = Double(now.mono - anchor.mono) / Double(now.tsc - anchor.tsc)
        guard ratio * Double(UInt64(1) << Self.shift) >= 1, ratio < Double(UInt64(1) << 8) else {
            fallBack(&calibration, now: now, reason: "implausible ratio \(ratio) ns per tick")
            return
        }
        let published = state.pointee
        let base: UInt64
        var rate = ratio
        if published.mult != 0, let last = calibration.last {
            // Continue from where the published conversion stands at this pair's TSC reading, and
            // aim the rate at CLOCK_MONOTONIC one interval from now.
            base = perf_fast_ns_convert(
                now.tsc, published.mult, published.shift, published.base_tsc, published.base_mono)
            let offset = Int64(bitPattern: now.mono &- base)
            if abs(offset) > abs(calibration.largestOffsetNanos) { calibration.largestOffsetNanos = offset }
            let horizon = Double(max(now.mono - last.mono, minimumIntervalNanos))
            rate = ratio * (1 + min(max(Double(offset) / horizon, -Self.maximumSlew), Self.maximumSlew))
        } else {
            // From CLOCK_MONOTONIC: start at the pair's later read, so no earlier read is ahead.
            base = now.mono &+ (now.width + 1) / 2
        }
        calibration.nanosPerTick = ratio
        calibration.last = now
        calibration.source = .tsc
        perf_fast_clock_publish(
            state, UInt64((rate * Double(UInt64(1) << Self.shift)).rounded()), Self.shift, now.tsc, base)
    }

    /// Back to CLOCK_MONOTONIC, and calibrate again from this pair.
    private func fallBack(
        _ calibration: inout Calibration, now: (tsc: UInt64, mono: UInt64, width: UInt64), reason: String
    ) {
        perf_fast_clock_publish(state, 0, 0, 0, 0)
        calibration.anchor = now
        calibration.last = nil
        calibration.nanosPerTick = nil
        calibration.source = .calibrating(reason: reason)
    }

    /// A (TSC, CLOCK_MONOTONIC) pair, the narrowest of 16 tries, with its width.
    static func pair() -> (tsc: UInt64, mono: UInt64, width: UInt64) {
        var tsc: UInt64 = 0
        var mono: UInt64 = 0
        let width = perf_fast_clock_pair(16, &tsc, &mono)
        return (tsc, mono, width)
    }
}
