// Histogram costs beside their physical baseline: the registry's hot record (inside every span
// end) against one CLOCK_MONOTONIC read, on an owned and on a shared thread stripe, plus the local
// value type and quantile extraction.
import CPerfShims
import Foundation
import PerfCore

enum HistogramBenchmarks {
    static let group = BenchGroup(name: "histogram") { context in
        let batches = context.scaled(200, quick: 40)
        let iterations = context.scaled(100_000, quick: 20_000)

        let clock = Bench.perOp(batches: batches, iterations: iterations) { count in
            var total: UInt64 = 0
            for _ in 0..<count { total &+= perf_monotonic_ns() }
            Bench.blackHole(total)
        }
        context.add(
            BenchRow(
                group: "histogram", name: "clock read (baseline)", unit: "ns/op",
                median: clock.median, p99: clock.p99, p999: clock.p999,
                note: "one perf_monotonic_ns() (CLOCK_MONOTONIC via the vDSO)"))

        let registry = HistogramRegistry()
        let single = Bench.perOp(batches: batches, iterations: iterations) { count in
            for index in 0..<count { registry.record("bench.histogram", nanos: spread(index)) }
        }
        context.add(
            BenchRow(
                group: "histogram", name: "registry record, 1 thread", unit: "ns/op",
                median: single.median, p99: single.p99, p999: single.p999,
                baseline: "clock read (baseline)", baselineMedian: clock.median, baselineP99: clock.p99,
                ratio: single.median / clock.median, target: "<= 15 ns", pass: single.median <= 15,
                note: "static name seen before, values from 1 µs to 4.2 ms over ~800 buckets"))

        let recordsPerProbe = 10_000
        let allocations = Bench.allocations {
            for index in 0..<recordsPerProbe { registry.record("bench.histogram", nanos: spread(index)) }
        }
        let allocationsPerOp = Double(allocations) / Double(recordsPerProbe)
        context.add(
            BenchRow(
                group: "histogram", name: "registry record allocations", unit: "allocs/op",
                median: allocationsPerOp, target: "0", pass: allocations == 0, allocationsPerOp: allocationsPerOp,
                note: "\(recordsPerProbe) records of a name already seen"))

        let firstRecord = Bench.allocations {
            var fresh = LatencyHistogram()
            fresh.record(nanos: 1_000)
            Bench.blackHole(fresh)
        }
        context.add(
            BenchRow(
                group: "histogram", name: "LatencyHistogram first record allocations", unit: "allocs",
                median: Double(firstRecord), allocationsPerOp: Double(firstRecord),
                note: "an empty histogram has no storage; the first record allocates its 2,112 counters once"))

        let perThread = Bench.concurrently(threads: 2) { _ in
            Bench.perOp(batches: batches, iterations: iterations) { count in
                for index in 0..<count { registry.record("bench.histogram.shared", nanos: spread(index)) }
            }
        }
        let sameName = perThread.map(\.median).reduce(0, +) / Double(perThread.count)
        context.add(
            BenchRow(
                group: "histogram", name: "registry record, 2 threads, same name", unit: "ns/op",
                median: sameName, p99: perThread.map(\.p99).max(),
                baseline: "clock read (baseline)", baselineMedian: clock.median,
                ratio: sameName / clock.median,
                note: "mean of the two threads' medians; same name, but each thread ticks its own stripe"))

        let ownNames = Bench.concurrently(threads: 2) { thread in
            Bench.perOp(batches: batches, iterations: iterations) { count in
                for index in 0..<count {
                    if thread == 0 {
                        registry.record("bench.histogram.thread0", nanos: spread(index))
                    } else {
                        registry.record("bench.histogram.thread1", nanos: spread(index))
                    }
                }
            }
        }
        let separate = ownNames.map(\.median).reduce(0, +) / Double(ownNames.count)
        context.add(
            BenchRow(
                group: "histogram", name: "registry record, 2 threads, own names", unit: "ns/op",
                median: separate, p99: ownNames.map(\.p99).max(),
                baseline: "clock read (baseline)", baselineMedian: clock.median,
                ratio: separate / clock.median,
                note: "mean of the two threads' medians; each name's counters are separate allocations"))

        let secondThreadAllocations = Bench.concurrently(threads: 1) { _ in
            registry.record("bench.histogram", nanos: 1_000)  // allocates this thread's stripe of the name
            return Bench.allocations {
                for index in 0..<recordsPerProbe { registry.record("bench.histogram", nanos: spread(index)) }
            }
        }[0]
        let secondThreadPerOp = Double(secondThreadAllocations) / Double(recordsPerProbe)
        context.add(
            BenchRow(
                group: "histogram", name: "registry record allocations, second thread", unit: "allocs/op",
                median: secondThreadPerOp, target: "0", pass: secondThreadAllocations == 0,
                allocationsPerOp: secondThreadPerOp,
                note: "\(recordsPerProbe) records on a new thread after its first record of the name"))

        let shared = sharedStripeRecord(batches: batches, iterations: iterations)
        context.add(
            BenchRow(
                group: "histogram", name: "registry record, shared stripe", unit: "ns/op",
                median: shared.median, p99: shared.p99, p999: shared.p999,
                baseline: "clock read (baseline)", baselineMedian: clock.median, ratio: shared.median / clock.median,
                note: "a thread started while \(PERF_EXCLUSIVE_STRIPES) others hold the exclusive stripes: atomic adds")
        )

        var local = LatencyHistogram()
        let value = Bench.perOp(batches: batches, iterations: iterations) { count in
            for index in 0..<count { local.record(nanos: spread(index)) }
        }
        Bench.blackHole(local.count)
        context.add(
            BenchRow(
                group: "histogram", name: "LatencyHistogram.record (local value)", unit: "ns/op",
                median: value.median, p99: value.p99, p999: value.p999,
                baseline: "clock read (baseline)", baselineMedian: clock.median, ratio: value.median / clock.median,
                note: "single-threaded, no atomics"))

        let quantile = Bench.perOp(batches: batches, iterations: context.scaled(2_000, quick: 500)) { count in
            var total: UInt64 = 0
            for index in 0..<count { total &+= local.quantile(index & 1 == 0 ? 0.99 : 0.5) }
            Bench.blackHole(total)
        }
        context.add(
            BenchRow(
                group: "histogram", name: "quantile extraction", unit: "ns/op",
                median: quantile.median, p99: quantile.p99, p999: quantile.p999,
                note: "p50/p99 of a histogram with \(local.nonEmptyBuckets.count) non-empty buckets"))

        let snapshot = Bench.perOp(batches: context.scaled(50, quick: 10), iterations: 10) { count in
            for _ in 0..<count { Bench.blackHole(registry.snapshot()) }
        }
        context.add(
            BenchRow(
                group: "histogram", name: "registry snapshot (2 names)", unit: "ns/op",
                median: snapshot.median, p99: snapshot.p99, note: "slow path: reports and diagnostics"))
    }

    /// The record of a thread that finds every exclusive stripe taken, so it shares a stripe and
    /// updates it with atomic adds: the fallback cost past `PERF_EXCLUSIVE_STRIPES` living threads.
    /// The holders record once, then block on a semaphore (no CPU) until the measurement is done.
    /// Uses a registry of its own, so the snapshot row still reads only the stripes of the rows above.
    static func sharedStripeRecord(batches: Int, iterations: Int) -> Distribution {
        let registry = HistogramRegistry()
        let holders = Int(PERF_EXCLUSIVE_STRIPES)
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let results = Bench.concurrently(threads: holders + 1) { thread -> Distribution? in
            guard thread == holders else {
                registry.record("bench.histogram.crowded", nanos: spread(thread))
                holding.signal()
                release.wait()
                return nil
            }
            for _ in 0..<holders { holding.wait() }
            defer { for _ in 0..<holders { release.signal() } }
            return Bench.perOp(batches: batches, iterations: iterations) { count in
                for index in 0..<count { registry.record("bench.histogram.crowded", nanos: spread(index)) }
            }
        }
        return results.compactMap { $0 }[0]
    }

    /// Durations from 1 µs to about 4.2 ms, scattered so successive records hit different buckets.
    @inline(__always)
    static func spread(_ index: Int) -> UInt64 {
        1_000 &+ (UInt64(truncatingIfNeeded: index) &* 2_654_435_761) & 0x3F_FFFF
    }
}
