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

    /// One thread's figures and two threads', from ``PairedThreads``' steps.
    struct Scaling {
        /// Every batch run alone, both threads' (ns/op).
        var single: Distribution
        /// Every batch run beside the other thread, both threads'.
        var two: Distribution
        /// Per thread (per CPU when pinned): the median over steps of its together batch over its
        /// alone batch of the same step.
        var perThreadRatios: [Double]
        /// Whether thread i ran pinned to CPU i.
        var pinned: Bool
        /// The row's ratio: the worse thread's.
        var ratio: Double { perThreadRatios.max() ?? 0 }
    }

    static func scaling(batches: Int, iterations: Int, _ body: @escaping @Sendable (Int) -> Void) -> Scaling {
        scaling(batches: batches, iterations: iterations) { _ in body }
    }

    /// Thread `index` running `loop(index)` alone and beside the other, in `batches` steps.
    ///
    /// Each step runs a batch of thread 0 alone (thread 1 asleep), one of thread 1 alone, and one
    /// of both at once, in an order that rotates from step to step; each thread's together batch
    /// is compared with its alone batch of the same step. A step takes a few milliseconds, so a
    /// burst of noise from the host (on these VMs a vCPU's memory-bound loops slow 1.4–1.9× for
    /// seconds at a time, alone or not) lands in both sides of a few steps instead of in one side
    /// of a whole round, as rounds of seconds would. Where two CPUs can be
    /// pinned, thread i runs on CPU i: the two vCPUs also run the same loop at different speeds
    /// (a C store loop pinned to each: 1.57–1.62 ns on one, 1.00–1.53 on the other), and unpinned
    /// a thread alone and the same thread together may run on different ones.
    static func scaling(
        batches: Int, iterations: Int, loop: @escaping @Sendable (Int) -> @Sendable (Int) -> Void
    ) -> Scaling {
        let threads = PairedThreads(pinned: CPUPinning.available, iterations: iterations, loop: loop)
        defer { threads.stop() }
        var alone: [[Double]] = [[], []]
        var together: [[Double]] = [[], []]
        var ratios: [[Double]] = [[], []]
        for step in -1..<max(3, batches) {  // step -1 warms up and is discarded
            var aloneStep = [0.0, 0.0]
            var togetherStep = [0.0, 0.0]
            for phase in 0..<3 {
                switch (phase + max(0, step)) % 3 {
                case 0: aloneStep[0] = threads.alone(0)
                case 1: aloneStep[1] = threads.alone(1)
                default: togetherStep = threads.together()
                }
            }
            guard step >= 0 else { continue }
            for index in 0..<2 {
                alone[index].append(aloneStep[index])
                together[index].append(togetherStep[index])
                ratios[index].append(togetherStep[index] / aloneStep[index])
            }
        }
        return Scaling(
            single: Distribution(alone[0] + alone[1]), two: Distribution(together[0] + together[1]),
            perThreadRatios: ratios.map { Distribution($0).median }, pinned: threads.pinned)
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

    /// The 2-thread row of `measured` against its 1-thread figures, with each thread's ratio in the note.
    static func twoThreadRow(
        _ name: String, _ measured: Scaling, target: String? = nil, pass: Bool? = nil, note: String, samples: Int
    ) -> BenchRow {
        BenchRow(
            group: "span", name: name, unit: "ns/op", median: measured.two.median, p99: measured.two.p99,
            p999: measured.two.p999, baseline: "the same thread alone (same run)",
            baselineMedian: measured.single.median, ratio: measured.ratio, target: target, pass: pass,
            note: note + "; " + pairingNote(measured), samples: samples)
    }

    /// How the row's threads ran, for its note.
    static func pairingNote(_ measured: Scaling) -> String {
        let placement =
            measured.pinned
            ? "thread i pinned to CPU i"
            : "threads not pinned (\(CPUPinning.unavailableReason))"
        let perThread = measured.perThreadRatios.map { String(format: "%.2f", $0) }.joined(separator: " and ")
        return "\(placement); each step runs thread 0 alone, thread 1 alone and both at once (order rotating); "
            + "ratio is the worse thread's median over steps of its together batch over its alone batch: "
            + perThread
    }

    static func run(_ context: BenchContext, batches: Int, iterations: Int) {
        guard let flight = FlightRecorder(capacity: 4096) else { return }
        let measured = scaling(batches: batches, iterations: iterations, endStores(HistogramRegistry(), flight))
        context.add(
            BenchRow(
                group: "span", name: "end stores without clock reads (histogram tick + flight record)", unit: "ns/op",
                median: measured.single.median, p99: measured.single.p99, p999: measured.single.p999,
                note: "the under-budget end's histogram tick and flight record, fixed durations, no clock; every "
                    + "batch either thread ran alone in the 2-thread row's steps"))
        let ratio = measured.ratio
        context.add(
            twoThreadRow(
                "end stores without clock reads, 2 threads (the worse thread)", measured,
                target: "≤ 1.1× 1 thread", pass: ratio <= 1.1,
                note: "both threads end spans of one name into one registry and one ring at once",
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
                "control: the same stores into a registry and ring per thread, 2 threads (the worse thread)", measured,
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
                "control: register-only loop, 2 threads (the worse thread)", measured,
                note: "8 multiply-xor-shift steps per op, no memory: the machine's own cost of a second busy "
                    + "thread, which the 2-thread row above cannot beat",
                samples: batches * 2))
    }
}
