// The `ledger` group: an over-budget span's line (encode + write) beside a raw write(2) of the
// same bytes, the encoder alone, two contended writers, what rotation costs an append, and one
// and four processes appending to one directory (LedgerSharedBenchmarks).
import CPerfShims
import Foundation
import Glibc
import Perf

enum LedgerBenchmarks {
    static let group = BenchGroup(name: "ledger") { context in
        let scratch = NSTemporaryDirectory() + "perf-bench-ledger-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        try encodeAlone(context)
        try appendVersusRawWrite(context, scratch: scratch + "/single")
        try contended(context, scratch: scratch + "/contended")
        try rotation(context, scratch: scratch + "/rotation")
        try LedgerShared.run(context, scratch: scratch + "/processes")
    }

    /// A typical over-budget span: what `Perf.Span.end()` hands the writer.
    static func sampleEvent(_ sequence: Int) -> LedgerEvent {
        var event = LedgerEvent(
            kind: .span, name: "feed.openThread", session: "6F9619FF-8B86-D011-B42D-00C04FC964FF",
            timestampMs: 1_796_216_400_123 + Int64(sequence))
        event.durationMs = 1734.25
        event.budgetMs = 1500
        event.exit = "success"
        event.detail = "/v1/threads"
        event.count = 200
        event.site = "MyService/API.swift:88"
        return event
    }

    /// The encoded line, for the raw baseline to write byte for byte.
    static func sampleLine() throws -> [UInt8] {
        let directory = NSTemporaryDirectory() + "perf-bench-ledger-line-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let writer = try LedgerWriter(directory: URL(fileURLWithPath: directory))
        try writer.append(sampleEvent(0))
        writer.close()
        return Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + LedgerWriter.fileName)))
    }

    /// A raw `O_APPEND` descriptor: the physical floor of writing a line.
    final class RawAppender: @unchecked Sendable {
        let descriptor: Int32
        let line: [UInt8]

        init(path: String, line: [UInt8]) throws {
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown) }
            self.line = line
        }

        deinit { close(descriptor) }

        @inline(__always)
        func write() {
            _ = line.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        }
    }

    private static func makeWriter(_ path: String, capBytes: Int) throws -> LedgerWriter {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return try LedgerWriter(directory: URL(fileURLWithPath: path), capBytes: capBytes)
    }

    static func latencies(_ count: Int, _ body: () -> Void) -> [Double] {
        for _ in 0..<min(100, count) { body() }
        var samples = [Double](repeating: 0, count: count)
        for index in 0..<count {
            let start = Bench.now()
            body()
            samples[index] = Double(Bench.now() - start)
        }
        return samples
    }

    private static func fixed(_ value: Double, _ digits: Int = 0) -> String {
        String(format: "%.\(digits)f", value)
    }

    // MARK: - Encode

    private static func encodeAlone(_ context: BenchContext) throws {
        let event = sampleEvent(0)
        let iterations = context.scaled(200_000, quick: 20_000)
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1024)
        let result = Bench.perOp(batches: 20, iterations: iterations / 20) { count in
            for _ in 0..<count {
                buffer.removeAll(keepingCapacity: true)
                LedgerWriter.encode(event, into: &buffer)
                Bench.blackHole(buffer.count)
            }
        }
        let allocations = Bench.allocations {
            for _ in 0..<1000 {
                buffer.removeAll(keepingCapacity: true)
                LedgerWriter.encode(event, into: &buffer)
            }
        }
        context.add(
            BenchRow(
                group: "ledger", name: "encode over-budget span line", unit: "ns/op", median: result.median,
                p99: result.p99, target: "≤ 2000 ns", pass: result.median <= 2000,
                allocationsPerOp: Double(allocations) / 1000,
                note: "\(buffer.count) B line, hand-written encoder into a reused buffer"))
    }

    // MARK: - One thread

    private static func appendVersusRawWrite(_ context: BenchContext, scratch: String) throws {
        let line = try sampleLine()
        let writer = try makeWriter(scratch + "/ledger", capBytes: 1 << 30)
        let raw = try RawAppender(path: scratch + "/raw/raw.jsonl", line: line)
        let event = sampleEvent(0)
        let count = context.scaled(100_000, quick: 10_000)
        // Alternate rounds so drift on a shared machine hits both sides alike.
        var mine: [Double] = []
        var base: [Double] = []
        for _ in 0..<5 {
            base += latencies(count / 5) { raw.write() }
            mine += latencies(count / 5) { try? writer.append(event) }
        }
        let allocations = Bench.allocations {
            for _ in 0..<1000 { try? writer.append(event) }
        }
        let ledger = Distribution(mine)
        let baseline = Distribution(base)
        let ratio = ledger.median / baseline.median
        context.add(
            BenchRow(
                group: "ledger", name: "over-budget append (encode + write)", unit: "ns/op", median: ledger.median,
                p99: ledger.p99, p999: ledger.p999, baseline: "raw write(2) of the same \(line.count) B line, O_APPEND",
                baselineMedian: baseline.median, baselineP99: baseline.p99, ratio: ratio, target: "≤ 3.5× raw write",
                pass: ratio <= 3.5, allocationsPerOp: Double(allocations) / 1000,
                note: "p99 \(fixed(ledger.p99 / baseline.p99, 2))× raw"))
    }

    // MARK: - Two threads

    private static func contended(_ context: BenchContext, scratch: String) throws {
        let line = try sampleLine()
        let writer = try makeWriter(scratch + "/ledger", capBytes: 1 << 30)
        let raw = try RawAppender(path: scratch + "/raw/raw.jsonl", line: line)
        let perThread = context.scaled(50_000, quick: 5_000)
        let rawSamples = Bench.concurrently(threads: 2) { _ in latencies(perThread) { raw.write() } }
        let ledgerSamples = Bench.concurrently(threads: 2) { _ in
            latencies(perThread) { try? writer.append(sampleEvent(0)) }
        }
        let ledger = Distribution(ledgerSamples.flatMap { $0 })
        let baseline = Distribution(rawSamples.flatMap { $0 })
        let ratio = ledger.median / baseline.median
        context.add(
            BenchRow(
                group: "ledger", name: "over-budget append, 2 threads contended", unit: "ns/op",
                median: ledger.median, p99: ledger.p99, p999: ledger.p999,
                baseline: "raw write(2) of the same line from 2 threads on one O_APPEND fd",
                baselineMedian: baseline.median, baselineP99: baseline.p99, ratio: ratio, target: "≤ 3.5× raw write",
                pass: ratio <= 3.5, note: "\(writer.statistics.linesWritten) lines, every one whole"))
    }

    // MARK: - Rotation

    /// Appends into a 64 KiB cap so the file rotates every ~250 lines; the appends that rotated
    /// are timed apart from the rest, beside the raw renames, unlink and `open(2)` a rotation needs.
    private static func rotation(_ context: BenchContext, scratch: String) throws {
        let writer = try makeWriter(scratch + "/ledger", capBytes: 64 * 1024)
        let event = sampleEvent(0)
        let count = context.scaled(100_000, quick: 10_000)
        var rotating: [Double] = []
        var plain: [Double] = []
        for _ in 0..<count {
            let before = writer.statistics.rotations
            let start = Bench.now()
            try? writer.append(event)
            let elapsed = Double(Bench.now() - start)
            if writer.statistics.rotations != before { rotating.append(elapsed) } else { plain.append(elapsed) }
        }
        let baseline = Distribution(try rawRotations(max(10, rotating.count), scratch: scratch + "/raw"))
        let rotated = Distribution(rotating)
        let maximum = rotating.max() ?? 0
        let ratio = rotated.median / baseline.median
        context.add(
            BenchRow(
                group: "ledger", name: "append that rotates (64 KiB cap)", unit: "ns/op", median: rotated.median,
                p99: rotated.p99,
                baseline:
                    "raw rename(2) of the old .prev aside + rename(2) + unlink(2) of the old + open(2) of a new file",
                baselineMedian: baseline.median, baselineP99: baseline.p99, ratio: ratio,
                target: "≤ 1.5× raw renames + unlink + open", pass: ratio <= 1.5,
                note: "\(rotating.count) rotations; max rotating append \(fixed(maximum / 1000, 1)) µs; "
                    + "appends that did not rotate: median \(fixed(Distribution(plain).median)) ns, "
                    + "max \(fixed((plain.max() ?? 0) / 1000, 1)) µs"))
    }

    /// The physical work of a rotation: fill a file to 64 KiB, move the old `.prev` aside, rename
    /// the file to `.prev`, unlink the old one (freeing its blocks), open a new one (the writer's
    /// order, in which a failed rename loses nothing). Only the syscalls are timed.
    private static func rawRotations(_ count: Int, scratch: String) throws -> [Double] {
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let path = scratch + "/raw.jsonl"
        let previous = scratch + "/raw.jsonl.prev"
        let retiring = scratch + "/raw.jsonl.prev.old"
        let filler = [UInt8](repeating: 0x61, count: 64 * 1024)
        var descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        var samples: [Double] = []
        for _ in 0..<count {
            _ = filler.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            let start = Bench.now()
            _ = rename(previous, retiring)
            _ = rename(path, previous)
            _ = unlink(retiring)
            let next = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
            samples.append(Double(Bench.now() - start))
            close(descriptor)
            descriptor = next
        }
        close(descriptor)
        return samples
    }
}
