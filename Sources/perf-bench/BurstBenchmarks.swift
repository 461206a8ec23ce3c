// Over-budget ends from many threads at once: what a burst writes and loses, how long each end
// holds its thread, and a request loop whose every request is over budget against the same loop
// under budget.
import CPerfShims
import Foundation
import Glibc
import Perf
import Synchronization

enum BurstBenchmarks {
    static let group = BenchGroup(name: "burst") { context in try run(context) }

    private static func run(_ context: BenchContext) throws {
        Perf.shutdown()
        try burst(context, threads: 8, perThread: context.scaled(2_000, quick: 1_000))
        try serverLoop(
            context, requestsPerRound: context.scaled(4_000, quick: 1_000), rounds: context.scaled(10, quick: 4))
    }

    /// A fresh data directory with Perf installed, recording with a cap no burst reaches.
    private static func installed(_ label: String) -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("perf-bench-\(label)-\(getpid())")
        try? FileManager.default.removeItem(at: directory)
        Perf.install(
            Perf.Configuration(
                directory: directory, app: Perf.AppInfo(name: "perf-bench"), recording: .enabled,
                ledgerCapBytes: 1 << 30))
        return directory
    }

    /// Runs `body(thread)` on `threads` threads released at once; returns the wall time from the
    /// release to the last thread's end and each thread's result.
    static func onThreads<T: Sendable>(_ threads: Int, _ body: @escaping @Sendable (Int) -> T) -> (UInt64, [T]) {
        let start = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        let results = Mutex<[Int: T]>([:])
        let ready = Atomic<Int>(0)
        for index in 0..<threads {
            group.enter()
            Thread {
                ready.add(1, ordering: .releasing)
                start.wait()
                let result = body(index)
                results.withLock { $0[index] = result }
                group.leave()
            }.start()
        }
        while ready.load(ordering: .acquiring) < threads { sched_yield() }
        let began = Bench.now()
        for _ in 0..<threads { start.signal() }
        group.wait()
        let elapsed = Bench.now() - began
        let byIndex = results.withLock { $0 }
        return (elapsed, (0..<threads).compactMap { byIndex[$0] })
    }

    /// Lines of `name` in the ledger and the counts of its `dropped` lines.
    private static func ledgerCounts(_ directory: URL, name: String) -> (lines: Int, dropped: Int) {
        var lines = 0
        var dropped = 0
        for file in [LedgerWriter.previousFileName, LedgerWriter.fileName] {
            guard let text = try? String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8) else {
                continue
            }
            for line in text.split(separator: "\n") {
                if line.contains("\"name\":\"\(name)\"") { lines += 1 }
                if line.contains("\"kind\":\"dropped\""), let range = line.range(of: "\"count\":") {
                    dropped += Int(line[range.upperBound...].prefix { $0.isNumber }) ?? 0
                }
            }
        }
        return (lines, dropped)
    }

    /// 8 threads end `perThread` over-budget spans each at once; the baseline writes the same
    /// number of same-size lines with raw `write(2)`s from as many threads, in the same run.
    private static func burst(_ context: BenchContext, threads: Int, perThread: Int) throws {
        let total = threads * perThread
        let directory = installed("burst")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (elapsed, latencies) = onThreads(threads) { _ -> [Double] in
            var samples: [Double] = []
            samples.reserveCapacity(perThread)
            for _ in 0..<perThread {
                let start = Bench.now()
                Perf.begin("bench.burst", slowMs: 0).end(detail: "/v1/threads")
                samples.append(Double(Bench.now() - start))
            }
            return samples
        }
        Perf.shutdown()  // waits for the backlog: every line is written or counted
        let (lines, dropped) = ledgerCounts(directory, name: "bench.burst")

        let raw = try RawLedgerLines(directory: directory, name: "bench.burst")
        defer { raw.close() }
        let (rawElapsed, rawLatencies) = onThreads(threads) { _ -> [Double] in
            var samples: [Double] = []
            samples.reserveCapacity(perThread)
            for _ in 0..<perThread {
                let start = Bench.now()
                Bench.blackHole(raw.write())
                samples.append(Double(Bench.now() - start))
            }
            return samples
        }
        let rate = Double(lines) / (Double(elapsed) / 1e9)
        let rawRate = Double(total) / (Double(rawElapsed) / 1e9)
        let lost = total - lines - dropped
        context.add(
            BenchRow(
                group: "burst", name: "over-budget ends from \(threads) threads at once: lines written",
                unit: "lines/s", median: rate, p99: nil, p999: nil,
                baseline: "raw write(2) of same-size lines from \(threads) threads", baselineMedian: rawRate,
                baselineP99: nil, ratio: rate / rawRate, target: "every line written or counted; none dropped",
                pass: lost == 0 && dropped == 0,
                note:
                    "\(lines) of \(total) lines written, \(dropped) counted in dropped lines, \(lost) lost uncounted; "
                    + "rate from the release of the threads to their last end",
                samples: total))
        let spans = Distribution(latencies.flatMap { $0 })
        let raws = Distribution(rawLatencies.flatMap { $0 })
        context.add(
            BenchRow(
                group: "burst", name: "over-budget end in an \(threads)-thread burst: the emitter's time",
                unit: "ns/op", median: spans.median, p99: spans.p99, p999: spans.p999,
                baseline: "raw write(2) from \(threads) threads", baselineMedian: raws.median, baselineP99: raws.p99,
                ratio: spans.p99 / raws.p99, target: "p99 ≤ 3× the raw write's p99", pass: spans.p99 <= 3 * raws.p99,
                note: "an end writes its own line, or queues it while another thread writes (2 cores, 8 threads)",
                samples: total))
    }

    /// A request's own work: the calling thread busy for `nanos` of wall time (a clock read per
    /// turn, so the length holds whatever the optimiser does to the loop).
    @inline(never)
    private static func work(nanos: UInt64) -> UInt64 {
        let start = Bench.now()
        var turns: UInt64 = 0
        while Bench.now() &- start < nanos { turns &+= 1 }
        return turns
    }

    /// 2 threads serve requests in a loop (about 25 µs of work each, inside a span): every request
    /// over budget against every request under it, rounds alternating, in the same run.
    private static func serverLoop(_ context: BenchContext, requestsPerRound: Int, rounds: Int) throws {
        let directory = installed("server-loop")
        defer {
            Perf.shutdown()
            try? FileManager.default.removeItem(at: directory)
        }
        func round(slowMs: Double?) -> Double {
            let (elapsed, _) = onThreads(2) { _ -> Int in
                for _ in 0..<requestsPerRound {
                    let span = Perf.begin("bench.request", slowMs: slowMs)
                    Bench.blackHole(work(nanos: 25_000))
                    span.end(detail: "/v1/request")
                }
                return 0
            }
            return Double(2 * requestsPerRound) / (Double(elapsed) / 1e9)
        }
        let (overRate, underRate) = Bench.alternatingRounds(
            rounds, baseline: { round(slowMs: 60_000) }, subject: { round(slowMs: 0) })
        let ratio = overRate.median / underRate.median
        context.add(
            BenchRow(
                group: "burst", name: "server loop, 2 threads, every request over budget",
                unit: "requests/s", median: overRate.median, p99: nil, p999: nil,
                baseline: "the same loop with every request under budget", baselineMedian: underRate.median,
                baselineP99: nil, ratio: ratio, target: "≥ 0.9× the under-budget loop", pass: ratio >= 0.9,
                note: "medians of \(rounds) alternating rounds of \(2 * requestsPerRound) requests of about 25 µs; "
                    + "each over-budget request writes a ledger line",
                samples: rounds))
    }
}
