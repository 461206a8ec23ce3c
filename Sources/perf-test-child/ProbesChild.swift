// `perf-test-child probes [forever] [work=<µs>]`: a program whose USDT probes (provider `perf`) a
// test records with `perf record` or `perf-report attach`. It writes what it did as JSON lines on
// stdout, so the test can compare the probe hits with the truth.
//
//   (no mode)  ends the spans of `plan` (known names, busy-wait durations measured with
//              CLOCK_MONOTONIC inside the span), one keyed span and one note, then blocks its watched queue for
//              400 ms in `ProbesChild.stallWatchedQueue` (one hang) and exits.
//              Lines: {"span":NAME,"ns":N,"outerNs":O,"budgetNs":B,"over":true|false} per span end,
//              {"hang":TARGET,"culprit":SYMBOL} per watchdog episode, {"done":true}.
//   forever    prints {"ready":PID}, then ends `probe.tick` spans back to back (each `work` µs of
//              busy work, 20 by default) until stdin closes, printing {"rate":SPANS_PER_SECOND}
//              every 250 ms and {"spans":TOTAL} at the end.
import CPerfShims
import Foundation
import Glibc
import Perf
import Synchronization

enum ProbesChild {
    /// Names, busy-wait durations (ms) and budgets (ms) of the spans the plain mode ends.
    static let plan: [(name: StaticString, ms: Double, slowMs: Double?)] =
        Array(repeating: ("probe.short", 2, 50), count: 6) + Array(repeating: ("probe.medium", 5, 50), count: 4)
        + Array(repeating: ("probe.slow", 12, 10), count: 3) + Array(repeating: ("probe.unbudgeted", 3, nil), count: 2)

    static func run(_ arguments: [String]) -> Int32 {
        Perf.install(
            Perf.Configuration(app: Perf.AppInfo(name: "probes-child", version: "1"), recording: .disabled))
        let work = arguments.compactMap { $0.hasPrefix("work=") ? Double($0.dropFirst(5)) : nil }.first ?? 20
        if arguments.contains("forever") { return forever(workMicros: work) }
        for step in plan {
            // Measured inside the span, so Perf's duration holds it plus only the clock reads
            // around it (never a first end's registration of the name).
            // `outerNs` also holds the begin and the end: a preemption between a clock read of Perf's
            // and one of the program's lands there, not in `ns`.
            let outerStart = perf_monotonic_ns()
            let span = Perf.begin(step.name, slowMs: step.slowMs)
            let start = perf_monotonic_ns()
            spin(nanos: UInt64(step.ms * 1_000_000))
            let ns = perf_monotonic_ns() - start
            span.end()
            let outerNs = perf_monotonic_ns() - outerStart
            let budget = step.slowMs.map { UInt64($0 * 1_000_000) }
            emit(
                "{\"span\":\"\(step.name)\",\"ns\":\(ns),\"outerNs\":\(outerNs),\"budgetNs\":\(budget ?? 0),"
                    + "\"over\":\(budget.map { ns > $0 } ?? false)}")
        }
        // A keyed span fires span_begin with its name (never the key) and span_end at its end.
        let keyedStart = perf_monotonic_ns()
        Perf.begin(key: "connection-secret-7", "probe.keyed", slowMs: 1_000)
        spin(nanos: 1_000_000)
        Perf.end(key: "connection-secret-7")
        emit(
            "{\"span\":\"probe.keyed\",\"ns\":\(perf_monotonic_ns() - keyedStart),\"budgetNs\":1000000000,\"over\":false}"
        )
        Perf.note("probe.note", detail: "never in a probe")
        emit("{\"note\":\"probe.note\"}")
        hangOnce()
        Perf.shutdown()
        emit("{\"done\":true}")
        return 0
    }

    /// Blocks a watched queue for 400 ms (hang threshold 250 ms) and waits for the episode.
    private static func hangOnce() {
        let queue = DispatchQueue(label: "probe.watched")
        let episodeSeen = DispatchSemaphore(value: 0)
        var configuration = Perf.HangWatchdog.Configuration()
        configuration.startupGrace = .zero
        configuration.onEpisode = { episode in
            emit(
                "{\"\(episode.kind.rawValue)\":\"\(episode.targetName)\",\"culprit\":\"\(episode.culprit?.symbol ?? "")\"}"
            )
            if episode.kind == .hang { episodeSeen.signal() }
        }
        let watchdog = Perf.HangWatchdog(monitoring: .queue(queue), configuration: configuration)
        watchdog.start()
        queue.async { stallWatchedQueue() }
        episodeSeen.wait()
        watchdog.stop()
    }

    /// The hang's culprit: the innermost stuck frame outside the runtime and libc.
    @inline(never)
    static func stallWatchedQueue() {
        let deadline = perf_monotonic_ns() + 400_000_000
        while perf_monotonic_ns() < deadline {
            var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
            nanosleep(&pause, nil)
        }
    }

    private static func forever(workMicros: Double) -> Int32 {
        let stop = Atomic<Bool>(false)
        Thread {
            while !FileHandle.standardInput.availableData.isEmpty {}
            stop.store(true, ordering: .relaxed)
        }.start()
        emit("{\"ready\":\(getpid())}")
        let work = UInt64(workMicros * 1_000)
        var total = 0
        var windowStart = perf_monotonic_ns()
        var windowSpans = 0
        while !stop.load(ordering: .relaxed) {
            let span = Perf.begin("probe.tick", slowMs: 1_000)
            spin(nanos: work)
            span.end()
            total += 1
            windowSpans += 1
            let now = perf_monotonic_ns()
            if now - windowStart >= 250_000_000 {
                emit("{\"rate\":\(Int(Double(windowSpans) * 1e9 / Double(now - windowStart)))}")
                windowStart = now
                windowSpans = 0
            }
        }
        emit("{\"spans\":\(total)}")
        Perf.shutdown()
        return 0
    }

    /// Busy-waits `nanos` by CLOCK_MONOTONIC.
    @inline(never)
    static func spin(nanos: UInt64) {
        let deadline = perf_monotonic_ns() + nanos
        while perf_monotonic_ns() < deadline {}
    }

    static func emit(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
