// The facade users import: every public name of Perf lives inside `enum Perf`.
import CPerfShims
import Foundation
import PerfCore
import Synchronization

/// Performance instrumentation for Swift programs on Linux.
///
/// Install once at start-up, then wrap the work you care about in budgeted spans. Under budget a
/// span costs about as much as two clock reads and stores nothing but a histogram tick; over
/// budget it appends one line to `perf-events.jsonl` in the data directory.
///
/// ```swift
/// import Perf
///
/// Perf.install(Perf.Configuration(app: Perf.AppInfo(name: "myservice", version: "1.4.0")))
/// let span = Perf.begin("api.get", slowMs: 1000)
/// // … the work …
/// span.end(detail: "/v1/threads", count: 200)
/// Perf.shutdown()
/// ```
///
/// - Note: Before `install`, every call is inert and costs about one atomic load: a library that
///   embeds Perf, or a helper process, never writes files by accident.
public enum Perf {
    /// Installs Perf for this process. Idempotent: a second call with the same configuration does
    /// nothing; one with a different configuration is reported on stderr and ignored (call
    /// ``shutdown()`` first to change it).
    ///
    /// Never throws and never crashes the host program: a data directory that cannot be created
    /// or written produces one message on stderr and recording continues in memory only; memory
    /// that cannot be had produces one message and Perf runs without its flight recorder, or,
    /// without even 1 MiB for the span histograms, stays uninstalled (every call inert). A
    /// `PERF_RECORDING` value that is neither on (`1`, `true`, `yes`, `on`) nor off (`0`, `false`,
    /// `no`, `off`) is ignored, with one message on stderr.
    ///
    /// `recording: .auto` in a release build with `PERF_RECORDING` unset records nothing to disk,
    /// and says so in one message on stderr with how to turn recording on. It is said once per
    /// install that takes effect (after a ``shutdown()``, the next install says it again; a
    /// repeated install while installed does nothing and says nothing). `.disabled`, or
    /// `PERF_RECORDING=0`, is the program's or the operator's choice and is not reported.
    ///
    /// - Parameter configuration: Where to write, who the program is, and the consent gate.
    public static func install(_ configuration: Configuration = Configuration()) {
        _ = install(
            configuration, environment: ProcessInfo.processInfo.environment, clock: SystemClock(),
            report: PerfState.reportToStandardError)
    }

    /// Stops every running hang watchdog (a hang in progress is written, marked in progress) and
    /// metrics endpoint, flushes everything, writes the session's end, and makes every call inert again.
    ///
    /// Then frees what the install held (span memory, flight recorder, queues, timers), once no
    /// thread is still inside a `begin` or `end` that loaded it: a span ending at that instant is
    /// waited for, not freed under; its histogram tick is kept in ``spanHistograms()``.
    public static func shutdown() {
        // Watchdogs first: a hang in progress is written while the ledger is still open.
        WatchdogRegistry.stopAll()
        MetricsEndpointRegistry.stopAll()  // every metrics endpoint's sockets closed before recording ends
        let runtime = PerfState.installed.withLock { state -> PerfRuntime? in
            guard let runtime = state.current else { return nil }
            state.current = nil
            PerfState.recorderSlot.store(nil, ordering: .releasing)
            perf_span_clock_recorder_store(0)
            HangReporting.install(nil)
            return runtime
        }
        DiagnosticsCapture.stopSchedule()
        guard let runtime else { return }
        // Registered spans still open close first, so the shutdown payload's tallies count them.
        runtime.recorder.closeAll(exit: .cancelled)
        _ = try? DiagnosticsCapture.capture(runtime, reason: "shutdown")
        runtime.shutdown()
        PerfState.retire(runtime)
    }

    /// Whether Perf is installed.
    public static var isInstalled: Bool { PerfState.recorderSlot.load(ordering: .acquiring) != nil }

    /// The data directory Perf is writing to, or `nil` when it is not installed or not recording
    /// to disk.
    public static var dataDirectory: URL? { PerfState.runtime()?.directory }

    /// The id of the current session (one per process run while installed).
    public static var sessionID: String? { PerfState.runtime()?.sessionID }

    /// A copy of the per-name latency histograms of every span ended in this process (every
    /// session of it, when it installed more than once).
    public static func spanHistograms() -> [String: Histogram] {
        let (merged, runtimes) = PerfState.installed.withLock { state in
            (state.retiredHistograms, state.keptForever + (state.current.map { [$0] } ?? []))
        }
        var result = merged
        for runtime in runtimes {
            for (name, histogram) in runtime.allHistograms() { result[name, default: Histogram()].merge(histogram) }
        }
        return result
    }

    /// How many shut-down runtimes were freed, and how many are kept for want of membarrier:
    /// for the tests and benchmarks of install/shutdown cycles.
    package static func retiredRuntimeCounts() -> (freed: Int, kept: Int) {
        PerfState.installed.withLock { ($0.freedCount, $0.keptForever.count) }
    }

    /// A copy of the hang and hitch duration histograms, per watchdog target (suppressed
    /// episodes excluded).
    public static func hangHistograms() -> [String: Histogram] { PerfState.hangHistograms.snapshot() }

    /// The most recent finished spans (the flight recorder, 4,096 by default) with wall-clock
    /// times and thread names; `nil` before install or with `flightRecorderCapacity` 0.
    public static func recentSpans() -> SpanIntervals? { PerfState.runtime()?.recentSpans() }

    /// A log-linear latency histogram (≤ 1 % relative error on any quantile from 1 µs to 1 hour).
    public typealias Histogram = LatencyHistogram
    /// How a span ended.
    public typealias Exit = SpanExit
    /// What the span sampler saw of an over-budget span's thread (a ledger line's `profile`).
    public typealias SpanProfile = PerfCore.SpanProfile

    /// The clock spans are timed with now: `tsc` (the CPU's invariant time-stamp counter, scaled
    /// to nanoseconds) or `monotonic` with the reason the TSC is not used; the TSC is chosen (or
    /// not) within about a second of install.
    public static var spanClock: String { SpanClock.shared.source.description }

    /// The seam tests and test children use: an injected environment, clock and message sink.
    @discardableResult
    package static func install(
        _ configuration: Configuration, environment: [String: String], clock: any PerfClock,
        report: @escaping (String) -> Void
    ) -> Bool {
        ThreadNames.installHook()
        return PerfState.installed.withLock { state in
            if let current = state.current {
                if current.configuration != configuration {
                    report(
                        "perf: install called again with a different configuration; keeping the first "
                            + "(call Perf.shutdown() before installing another)")
                }
                return false
            }
            guard
                let runtime = PerfRuntime.make(
                    configuration: configuration, environment: environment, clock: clock, report: report)
            else { return false }
            state.current = runtime
            let recorder = Unmanaged.passUnretained(runtime.recorder)
            // Stored before the slot, cleared with it (`perf_span_clock_recorder`).
            perf_span_clock_recorder_store(runtime.recorder.readsSpanClock ? UInt(bitPattern: recorder.toOpaque()) : 0)
            PerfState.recorderSlot.store(recorder, ordering: .releasing)
            HangReporting.install(HangRecording())
            DiagnosticsCapture.startSchedule(runtime)
            return true
        }
    }
}

/// Process-wide state behind the facade.
@usableFromInline
enum PerfState {
    struct Installed {
        var current: PerfRuntime?
        /// The histograms of every runtime shut down and freed, merged.
        var retiredHistograms: [String: LatencyHistogram] = [:]
        /// Runtimes shut down but never freed: where the kernel has no membarrier, or shutdown ran
        /// inside a reader section (from code a span's end called), so no grace period can be
        /// known to have passed.
        var keptForever: [PerfRuntime] = []
        /// Runtimes shut down and freed (a test's measure of the reclamation).
        var freedCount = 0
    }

    /// The installed recorder, read with one atomic load on the hot path; `nil` means inert.
    ///
    /// Installed, the hot path loads it again inside a reader section (``withRecorder(_:)``), so
    /// that shutdown can free a retired runtime once every thread that may have loaded it has
    /// left its section (`perf_reader_synchronize`). A section is a few thread-local stores and
    /// touches no line another thread writes, so it costs the end a couple of nanoseconds
    /// (perf-bench's facade rows). A scoped `Perf.begin` of a recorder that reads the span clock
    /// takes no section: it never loads through the recorder (`perf_span_clock_recorder`).
    @usableFromInline
    static let recorderSlot = Atomic<Unmanaged<SpanRecorder>?>(nil)

    /// Runs `body` with the installed recorder inside a reader section; nil when none is
    /// installed. The recorder is valid until `body` returns: never keep it.
    @inlinable @inline(__always)
    static func withRecorder<Result>(_ body: (SpanRecorder) -> Result) -> Result? {
        let section = perf_reader_enter()
        defer { perf_reader_exit(section) }
        guard let recorder = recorderSlot.load(ordering: .acquiring) else { return nil }
        return recorder._withUnsafeGuaranteedRef(body)
    }

    /// Frees a runtime that shutdown has unpublished, once no reader section can still hold its
    /// recorder; its histograms are kept, merged, for ``Perf/spanHistograms()``. Where the kernel
    /// cannot say when that is (no membarrier), the runtime is kept: a leak of one runtime per
    /// install cycle is safer than freeing memory a thread may still read.
    static func retire(_ runtime: PerfRuntime) {
        guard perf_reader_synchronize() == 0 else {
            installed.withLock { $0.keptForever.append(runtime) }
            return
        }
        let histograms = runtime.allHistograms()
        installed.withLock { state in
            for (name, histogram) in histograms {
                state.retiredHistograms[name, default: LatencyHistogram()].merge(histogram)
            }
            state.freedCount += 1
        }
    }

    static let installed = Mutex(Installed())

    /// Hang and hitch durations per watchdog target: names known at run time only, so a
    /// dictionary under a lock (no span memory to map, nothing that can fail).
    static let hangHistograms = NamedHistograms()

    static func runtime() -> PerfRuntime? { installed.withLock { $0.current } }

    /// One message on stderr with write(2), whatever becomes of it: `FileHandle.write` traps on
    /// any error, and a stderr that cannot take the line (a full disk, `/dev/full`, a log file
    /// past `ulimit -f`, a closed descriptor) must not crash the host. CI's log file past the
    /// writer's 64 KiB `RLIMIT_FSIZE` turned the span-memory warning into SIGILL.
    static func reportToStandardError(_ message: String) {
        _ = Array((message + "\n").utf8).withUnsafeBytes { FileSyscalls.live.writeAll(STDERR_FILENO, $0) }
    }
}

/// Latency histograms by a name known at run time, under a lock: the slow path of
/// ``HistogramRegistry/record(name:nanos:)`` without the span memory it needs a mapping for.
final class NamedHistograms: Sendable {
    private let histograms = Mutex<[String: LatencyHistogram]>([:])

    /// Ticks `name`'s histogram.
    func record(name: String, nanos: UInt64) {
        histograms.withLock { $0[name, default: LatencyHistogram()].record(nanos: nanos) }
    }

    /// A copy of every histogram, by name.
    func snapshot() -> [String: LatencyHistogram] { histograms.withLock { $0 } }
}
