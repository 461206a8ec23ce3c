// The stores of a span end without its clock reads, from one thread and from two at once: where
// two threads could share a cache line (the flight recorder's ticket head, a histogram stripe,
// the name table), the two-thread row shows it; with the clock reads in, on a machine whose
// clock read costs tens of nanoseconds, the span rows hide it.
import CPerfShims
import Foundation
import PerfCore
import Synchronization

enum SpanContentionBenchmarks {
    private static let controlSink = Atomic<UInt64>(0)
    /// Alternating rounds of one thread, then two: a burst of noise from the host (these VMs'
    /// second vCPU is sometimes busy for a whole second) lands in one round, not in the whole row.
    static let rounds = 7

    /// One thread's figures and two threads', alternated over ``rounds`` rounds.
    struct Scaling {
        /// The 1-thread median of each round.
        var single: Distribution
        /// The 1-thread worst p99 and p99.9 over all rounds.
        var singleP99: Double
        var singleP999: Double
        /// Median of the two threads' medians, per round.
        var two: Distribution
        /// The two threads' worst p99 and p99.9 over all rounds.
        var twoP99: Double
        var twoP999: Double
        /// Each round's 2-thread median over its 1-thread median.
        var ratios: Distribution
    }

    static func scaling(batches: Int, iterations: Int, _ body: @escaping @Sendable (Int) -> Void) -> Scaling {
        scaling(batches: batches, iterations: iterations) { _ in body }
    }

    /// As above, with thread `index`'s own loop from `loop(index)` (the 1-thread rounds use 0's).
    static func scaling(
        batches: Int, iterations: Int, loop: @escaping @Sendable (Int) -> @Sendable (Int) -> Void
    ) -> Scaling {
        let perRound = max(3, batches / rounds)
        var singles: [Double] = []
        var twos: [Double] = []
        var ratios: [Double] = []
        var worstP99 = 0.0, worstP999 = 0.0
        var singleP99 = 0.0, singleP999 = 0.0
        for _ in 0..<rounds {
            let single = Bench.perOp(batches: perRound, iterations: iterations, loop(0))
            let perThread = Bench.concurrently(threads: 2) { index in
                Bench.perOp(batches: perRound, iterations: iterations, loop(index))
            }
            let two = Distribution(perThread.map(\.median)).median
            singles.append(single.median)
            twos.append(two)
            ratios.append(two / single.median)
            singleP99 = max(singleP99, single.p99)
            singleP999 = max(singleP999, single.p999)
            worstP99 = max(worstP99, perThread.map(\.p99).max() ?? 0)
            worstP999 = max(worstP999, perThread.map(\.p999).max() ?? 0)
        }
        return Scaling(
            single: Distribution(singles), singleP99: singleP99, singleP999: singleP999, two: Distribution(twos),
            twoP99: worstP99, twoP999: worstP999, ratios: Distribution(ratios))
    }

    /// A span end's stores without its clock reads, into `histograms` and `flight`, `count` times.
    static func endStores(_ histograms: HistogramRegistry, _ flight: FlightRecorder) -> @Sendable (Int) -> Void {
        { count in
            for index in 0..<count {
                let nanos = UInt64(truncatingIfNeeded: 1_000 &+ (index & 1023))
                let reference = histograms.record("bench.contended", nanos: nanos)
                flight.record(
                    "bench.contended", nameRef: reference, startNanos: UInt64(index), durationNanos: nanos,
                    budgetNanos: 1_000_000_000, exit: .success)
            }
        }
    }

    /// The 2-thread row of `measured` against its 1-thread figures, with the rounds' range in the note.
    static func twoThreadRow(
        _ name: String, _ measured: Scaling, target: String? = nil, pass: Bool? = nil, note: String, samples: Int
    ) -> BenchRow {
        BenchRow(
            group: "span", name: name, unit: "ns/op", median: measured.two.median, p99: measured.twoP99,
            p999: measured.twoP999, baseline: "the same from 1 thread (same run)",
            baselineMedian: measured.single.median, ratio: measured.ratios.median, target: target, pass: pass,
            note: note + "; " + String(format: "rounds %.2f–%.2f", measured.ratios.lowest, measured.ratios.highest),
            samples: samples)
    }

    static func run(_ context: BenchContext, batches: Int, iterations: Int) {
        guard let flight = FlightRecorder(capacity: 4096) else { return }
        let measured = scaling(batches: batches, iterations: iterations, endStores(HistogramRegistry(), flight))
        context.add(
            BenchRow(
                group: "span", name: "end stores without clock reads (histogram tick + flight record)", unit: "ns/op",
                median: measured.single.median, p99: measured.singleP99, p999: measured.singleP999,
                note: "the under-budget end's histogram tick and flight record, fixed durations, no clock; median "
                    + "of \(rounds) rounds' medians, p99 and p99.9 the worst round's"))
        let ratio = measured.ratios.median
        context.add(
            twoThreadRow(
                "end stores without clock reads, 2 threads (median of thread medians)", measured,
                target: "≤ 1.1× 1 thread", pass: ratio <= 1.1,
                note: "both threads end spans of one name into one registry and one ring at once; ratio is the "
                    + "median over \(rounds) alternating rounds (1 thread, then 2) of each round's ratio",
                samples: batches * 2))
        unshared(context, batches: batches, iterations: iterations)
        control(context, batches: batches, iterations: iterations)
    }

    /// The same stores with nothing shared: each thread ends spans into its own registry and its
    /// own ring. Whatever this row's ratio is above 1 is the machine's (two vCPUs contending for a
    /// core's caches or the host's memory), not Perf's sharing; the row above can do no better.
    static func unshared(_ context: BenchContext, batches: Int, iterations: Int) {
        guard let first = FlightRecorder(capacity: 4096), let second = FlightRecorder(capacity: 4096) else { return }
        let loops = [endStores(HistogramRegistry(), first), endStores(HistogramRegistry(), second)]
        let measured = scaling(batches: batches, iterations: iterations) { loops[$0] }
        context.add(
            twoThreadRow(
                "control: the same stores into a registry and ring per thread, 2 threads", measured,
                note: "nothing shared between the threads: the machine's own 2-thread cost for this work",
                samples: batches * 2))
    }

    /// The machine's own 2-thread scaling, for the row above: a loop that touches no memory, from
    /// one thread and then from two at once. Two threads with nothing to share should cost what
    /// one does; where the two vCPUs share a physical core (or the hypervisor's time), this ratio
    /// is above 1 too, and the span row cannot do better than it.
    static func control(_ context: BenchContext, batches: Int, iterations: Int) {
        @Sendable func mix(_ count: Int) {
            var x = UInt64(truncatingIfNeeded: count) | 1
            for _ in 0..<count {
                for _ in 0..<8 { x = (x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407) ^ (x >> 29) }
            }
            // An atomic store: the optimiser deleted the loop when x only went to blackHole.
            controlSink.store(x, ordering: .relaxed)
        }
        let measured = scaling(batches: batches, iterations: iterations, mix)
        context.add(
            twoThreadRow(
                "control: register-only loop, 2 threads (median of thread medians)", measured,
                note: "8 multiply-xor-shift steps per op, no memory: the machine's own cost of a second busy "
                    + "thread, which the 2-thread row above cannot beat",
                samples: batches * 2))
    }
}
