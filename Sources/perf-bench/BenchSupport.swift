// Measurement primitives shared by every benchmark group: timing loops, distributions,
// allocation counting and the result rows that end up in Reports/BENCHMARKS.{md,json}.
import CPerfAllocCounter
import CPerfShims
import Foundation
import Glibc

/// A distribution of per-operation costs in nanoseconds.
struct Distribution: Codable {
    var count: Int
    var median: Double
    var p99: Double
    var p999: Double
    var mean: Double
    var lowest: Double
    var highest: Double

    init(_ samples: [Double]) {
        let sorted = samples.sorted()
        count = sorted.count
        lowest = sorted.first ?? 0
        highest = sorted.last ?? 0
        func quantile(_ q: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let index = min(sorted.count - 1, Int((Double(sorted.count - 1) * q).rounded()))
            return sorted[index]
        }
        median = quantile(0.5)
        p99 = quantile(0.99)
        p999 = quantile(0.999)
        mean = sorted.isEmpty ? 0 : sorted.reduce(0, +) / Double(sorted.count)
    }
}

/// One line of the benchmark report: a figure, its baseline from the same run, and its target.
struct BenchRow: Codable {
    var group: String
    var name: String
    /// Unit of `median`/`p99`/`p999` ("ns/op", "ops/s", "GB/s", "%", …).
    var unit: String
    var median: Double
    var p99: Double?
    var p999: Double?
    var baseline: String?
    var baselineMedian: Double?
    var baselineP99: Double?
    /// median / baselineMedian (or the ratio the target is stated in).
    var ratio: Double?
    var target: String?
    var pass: Bool?
    var allocationsPerOp: Double?
    var note: String?
    /// Samples behind `median`/`p99`/`p999` (batches or timed calls), when the row says.
    var samples: Int?
}

/// Collects rows and knows whether this is a `--quick` run.
final class BenchContext {
    let quick: Bool
    private(set) var rows: [BenchRow] = []

    init(quick: Bool) { self.quick = quick }

    /// Scales an iteration count down in quick mode.
    func scaled(_ full: Int, quick quickCount: Int? = nil) -> Int {
        quick ? (quickCount ?? max(1, full / 10)) : full
    }

    func add(_ row: BenchRow) {
        rows.append(row)
        let ratio = row.ratio.map { String(format: " ratio %.2f", $0) } ?? ""
        let mark = row.pass.map { $0 ? " PASS" : " MISS" } ?? ""
        let target = row.target.map { " (target \($0))" } ?? ""
        FileHandle.standardError.write(
            Data(
                String(format: "  %@/%@: median %.1f %@", row.group, row.name, row.median, row.unit).utf8
                    + Data("\(ratio)\(target)\(mark)\n".utf8)))
    }
}

/// The physical baseline of the over-budget rows: an `O_APPEND` descriptor beside the ledger and
/// a span line of the same size as the ledger's, written with raw `write(2)`s.
struct RawLedgerLines {
    let fd: Int32
    let line: [UInt8]

    init(directory: URL, name: String) throws {
        fd = open(directory.appendingPathComponent("raw.jsonl").path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CocoaError(.fileWriteUnknown) }
        line = Array(
            (#"{"budgetMs":0,"detail":"/v1/threads","durationMs":0.001,"exit":"success","kind":"span","#
                + #""name":"\#(name)","session":"0123456789abcdef","site":"perf_bench/FacadeBenchmarks.swift:99","#
                + #""ts":"2026-12-02T13:00:00.123Z","v":1}"# + "\n").utf8)
    }

    /// One line, as one `write(2)`.
    func write() -> Int { line.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } }

    func close() { _ = Glibc.close(fd) }
}

/// A named set of benchmarks.
struct BenchGroup: Sendable {
    let name: String
    let run: @Sendable (BenchContext) throws -> Void
}

enum Bench {
    /// Keeps a value alive so the optimiser cannot delete the work that produced it.
    @inline(never)
    static func blackHole<T>(_ value: T) {
        withExtendedLifetime(value) {}
    }

    /// Monotonic nanoseconds.
    @inline(__always)
    static func now() -> UInt64 { perf_monotonic_ns() }

    /// Runs `body(iterations)` `batches` times and returns the per-operation cost of each batch.
    /// Use for operations far cheaper than a clock read.
    static func perOp(batches: Int, iterations: Int, _ body: (Int) -> Void) -> Distribution {
        body(min(iterations, 1000))  // warm-up
        var samples: [Double] = []
        samples.reserveCapacity(batches)
        for _ in 0..<batches {
            let start = now()
            body(iterations)
            let elapsed = now() - start
            samples.append(Double(elapsed) / Double(iterations))
        }
        return Distribution(samples)
    }

    /// Alternates batches of a baseline and a subject so both see the same machine noise, and
    /// returns the per-operation cost distribution of each (one warm-up batch discarded).
    static func alternating(
        batches: Int, iterations: Int, baseline: (Int) -> Void, subject: (Int) -> Void
    ) -> (subject: Distribution, baseline: Distribution) {
        var subjectSamples: [Double] = []
        var baselineSamples: [Double] = []
        for batch in -1..<batches {
            var start = now()
            baseline(iterations)
            let baselineCost = Double(now() - start) / Double(iterations)
            start = now()
            subject(iterations)
            let subjectCost = Double(now() - start) / Double(iterations)
            if batch >= 0 {
                baselineSamples.append(baselineCost)
                subjectSamples.append(subjectCost)
            }
        }
        return (Distribution(subjectSamples), Distribution(baselineSamples))
    }

    /// Rates (or any figure) of two configurations measured in alternating rounds, after one
    /// warm-up round of each: the distributions of `rounds` rounds each.
    static func alternatingRounds(
        _ rounds: Int, baseline: () -> Double, subject: () -> Double
    ) -> (subject: Distribution, baseline: Distribution) {
        _ = baseline()
        _ = subject()
        var baselines: [Double] = []
        var subjects: [Double] = []
        for _ in 0..<rounds {
            baselines.append(baseline())
            subjects.append(subject())
        }
        return (Distribution(subjects), Distribution(baselines))
    }

    /// A loop of CLOCK_MONOTONIC read pairs: the physical floor of any span.
    static func clockPairs(_ iterations: Int) {
        var total: UInt64 = 0
        for _ in 0..<iterations {
            let start = perf_monotonic_ns()
            total &+= perf_monotonic_ns() &- start
        }
        blackHole(total)
    }

    /// Times each call of `body` on its own and returns the latency distribution (tails included).
    static func latencies(count: Int, warmup: Int = 100, _ body: () -> Void) -> Distribution {
        for _ in 0..<warmup { body() }
        var samples = [Double](repeating: 0, count: count)
        for index in 0..<count {
            let start = now()
            body()
            samples[index] = Double(now() - start)
        }
        return Distribution(samples)
    }

    /// Heap allocations (malloc and friends) the calling thread makes while `body` runs.
    static func allocations(_ body: () -> Void) -> UInt64 {
        let before = perf_thread_alloc_count()
        body()
        return perf_thread_alloc_count() - before
    }

    /// Allocations per call of `body` over `iterations` calls on this thread, after one warm-up
    /// call (lazy globals and caches allocate once).
    static func allocationsPerOp(iterations: Int, _ body: () -> Void) -> Double {
        body()
        let count = allocations { for _ in 0..<iterations { body() } }
        return Double(count) / Double(iterations)
    }

    /// Allocations by every thread of the process while `body` runs; for multi-threaded probes
    /// where the measuring thread only waits.
    static func processAllocations(_ body: () -> Void) -> UInt64 {
        let before = perf_process_alloc_count()
        body()
        return perf_process_alloc_count() - before
    }

    /// Runs `body` on `threads` threads at once (released together) and returns each thread's
    /// result.
    static func concurrently<T: Sendable>(threads: Int, _ body: @escaping @Sendable (Int) -> T) -> [T] {
        let results = ResultBox<T>(count: threads)
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for index in 0..<threads {
            done.enter()
            let thread = Thread {
                start.wait()
                results.set(index, body(index))
                done.leave()
            }
            thread.start()
        }
        for _ in 0..<threads { start.signal() }
        done.wait()
        return results.values()
    }
}

/// Collects per-thread results.
final class ResultBox<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [T?]

    init(count: Int) { storage = Array(repeating: nil, count: count) }

    func set(_ index: Int, _ value: T) { lock.withLock { storage[index] = value } }

    func values() -> [T] { lock.withLock { storage.compactMap { $0 } } }
}
