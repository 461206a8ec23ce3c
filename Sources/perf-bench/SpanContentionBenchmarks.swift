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
    static func run(_ context: BenchContext, batches: Int, iterations: Int) {
        let histograms = HistogramRegistry()
        guard let flight = FlightRecorder(capacity: 4096) else { return }
        @Sendable func ends(_ count: Int) {
            for index in 0..<count {
                let nanos = UInt64(truncatingIfNeeded: 1_000 &+ (index & 1023))
                let reference = histograms.record("bench.contended", nanos: nanos)
                flight.record(
                    "bench.contended", nameRef: reference, startNanos: UInt64(index), durationNanos: nanos,
                    budgetNanos: 1_000_000_000, exit: .success)
            }
        }
        let single = Bench.perOp(batches: batches, iterations: iterations, ends)
        let perThread = Bench.concurrently(threads: 2) { _ in
            Bench.perOp(batches: batches, iterations: iterations, ends)
        }
        let two = Distribution(perThread.map(\.median))
        context.add(
            BenchRow(
                group: "span", name: "end stores without clock reads (histogram tick + flight record)", unit: "ns/op",
                median: single.median, p99: single.p99, p999: single.p999,
                note: "the under-budget end's histogram tick and flight record, fixed durations, no clock"))
        context.add(
            BenchRow(
                group: "span", name: "end stores without clock reads, 2 threads (median of thread medians)",
                unit: "ns/op", median: two.median, p99: perThread.map(\.p99).max(), p999: perThread.map(\.p999).max(),
                baseline: "the same from 1 thread (same run)", baselineMedian: single.median,
                ratio: two.median / single.median, target: "≤ 1.1× 1 thread", pass: two.median <= 1.1 * single.median,
                note: "both threads end spans of one name into one registry and one ring at once",
                samples: batches * 2))
        control(context, batches: batches, iterations: iterations)
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
        let single = Bench.perOp(batches: batches, iterations: iterations, mix)
        let perThread = Bench.concurrently(threads: 2) { _ in Bench.perOp(batches: batches, iterations: iterations, mix) }
        let two = Distribution(perThread.map(\.median))
        context.add(
            BenchRow(
                group: "span", name: "control: register-only loop, 2 threads (median of thread medians)", unit: "ns/op",
                median: two.median, p99: perThread.map(\.p99).max(), p999: perThread.map(\.p999).max(),
                baseline: "the same from 1 thread (same run)", baselineMedian: single.median,
                ratio: two.median / single.median,
                note: "8 multiply-xor-shift steps per op, no memory: the machine's own cost of a second busy "
                    + "thread, which the 2-thread row above cannot beat",
                samples: batches * 2))
    }
}
