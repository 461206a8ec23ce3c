// The `journal` group: JournalKit's append, rotation, fsync, recovery and CRC-32C, each measured
// beside the raw syscall that does the same physical work, in the same run.
import CPerfShims
import Foundation
import Glibc
import JournalKit

enum JournalBenchmarks {
    static let group = BenchGroup(name: "journal") { context in
        let scratch = NSTemporaryDirectory() + "perf-bench-journal-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        for size in [64, 512] { try appendSingleThread(context, size: size, scratch: scratch + "/single\(size)") }
        for size in [64, 512] { try appendContended(context, size: size, scratch: scratch + "/contended\(size)") }
        try rotation(context, scratch: scratch + "/rotation")
        try fsyncAppend(context, scratch: scratch + "/fsync")
        try recovery(context, scratch: scratch + "/recovery")
        checksum(context)
    }

    // MARK: - Baselines

    /// A raw `O_APPEND` descriptor writing pre-framed bytes: what the journal costs beyond `write(2)`.
    final class RawAppender: @unchecked Sendable {
        let descriptor: Int32
        let frame: [UInt8]

        init(path: String, payloadSize: Int) throws {
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown) }
            frame = [UInt8](repeating: 0x5A, count: payloadSize + 8)
        }

        deinit { close(descriptor) }

        @inline(__always)
        func write() {
            _ = frame.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        }
    }

    private static func payload(_ size: Int) -> UnsafeRawBufferPointer {
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 8)
        for index in 0..<size { bytes[index] = UInt8(truncatingIfNeeded: index &* 31) }
        return UnsafeRawBufferPointer(bytes)
    }

    // MARK: - Single thread

    private static func appendSingleThread(_ context: BenchContext, size: Int, scratch: String) throws {
        let journal = try Journal(directory: URL(fileURLWithPath: scratch), configuration: .init(byteBudget: 1 << 30))
        defer { journal.close() }
        let raw = try RawAppender(path: scratch + "/raw.bin", payloadSize: size)
        let bytes = payload(size)
        defer { bytes.deallocate() }
        let count = context.scaled(200_000, quick: 20_000)
        // Alternate rounds so drift on a shared machine hits both sides alike.
        var journalSamples: [Double] = []
        var rawSamples: [Double] = []
        var journalNanos: UInt64 = 0
        var rawNanos: UInt64 = 0
        for _ in 0..<5 {
            rawSamples += latencies(count / 5) { raw.write() }
            journalSamples += latencies(count / 5) { try? journal.append(bytes) }
            rawNanos += timed { for _ in 0..<(count / 5) { raw.write() } }
            journalNanos += timed { for _ in 0..<(count / 5) { try? journal.append(bytes) } }
        }
        let mine = Distribution(journalSamples)
        let base = Distribution(rawSamples)
        let allocations = Bench.allocationsPerOp(iterations: 1_000) { try? journal.append(bytes) }
        let pass = mine.median <= base.median + 500 && mine.p99 <= 1.5 * base.p99 && mine.p999 <= 2 * base.p999
        context.add(
            BenchRow(
                group: "journal", name: "append \(size) B latency", unit: "ns/op", median: mine.median, p99: mine.p99,
                p999: mine.p999, baseline: "raw write(2) of the \(size + 8) B frame, O_APPEND",
                baselineMedian: base.median, baselineP99: base.p99, ratio: mine.median / base.median,
                target: "p50 ≤ raw + 500 ns, p99 ≤ 1.5× raw, p99.9 ≤ 2× raw", pass: pass,
                allocationsPerOp: allocations,
                note: "raw p99.9 \(fixed(base.p999)) ns; p99 \(fixed(mine.p99 / base.p99, 2))×, "
                    + "p99.9 \(fixed(mine.p999 / base.p999, 2))× raw"))
        let mineRate = Double(count) / (Double(journalNanos) / 1e9)
        let rawRate = Double(count) / (Double(rawNanos) / 1e9)
        context.add(
            BenchRow(
                group: "journal", name: "append \(size) B throughput", unit: "ops/s", median: mineRate,
                baseline: "raw write(2), O_APPEND", baselineMedian: rawRate, ratio: mineRate / rawRate,
                target: "≥ 0.7× raw", pass: mineRate >= 0.7 * rawRate))
    }

    /// Each call of `body` timed on its own, after a short warm-up.
    private static func latencies(_ count: Int, _ body: () -> Void) -> [Double] {
        for _ in 0..<min(100, count) { body() }
        var samples = [Double](repeating: 0, count: count)
        for index in 0..<count {
            let start = Bench.now()
            body()
            samples[index] = Double(Bench.now() - start)
        }
        return samples
    }

    /// `value` with `digits` decimals (String(format:) with non-ASCII formats crashes on Linux).
    private static func fixed(_ value: Double, _ digits: Int = 0) -> String {
        String(format: "%.\(digits)f", value)
    }

    private static func timed(_ body: () -> Void) -> UInt64 {
        let start = Bench.now()
        body()
        return Bench.now() - start
    }

    // MARK: - Two threads

    private static func appendContended(_ context: BenchContext, size: Int, scratch: String) throws {
        let journal = try Journal(directory: URL(fileURLWithPath: scratch), configuration: .init(byteBudget: 1 << 30))
        defer { journal.close() }
        let raw = try RawAppender(path: scratch + "/raw.bin", payloadSize: size)
        // A round is 5 slices of each side, alternating raw and journal slice by slice, after one
        // round not counted. The host's slow spells last about a second: with each side of a
        // round run whole (20,000 or 50,000 appends a thread), a spell that fell on one side swung
        // the round's ratio by ±20 % either way (0.65–1.23), and the target holds every round.
        let slices = 5
        let perSlice = context.scaled(10_000, quick: 1_000)
        let address = UInt(bitPattern: payload(size).baseAddress)
        defer { UnsafeRawPointer(bitPattern: address)?.deallocate() }
        func run(_ body: @escaping @Sendable () -> Void) -> ([Double], Double) {
            let results = Bench.concurrently(threads: 2) { _ -> ([Double], UInt64, UInt64) in
                let start = Bench.now()
                let samples = latencies(perSlice, body)
                return (samples, start, Bench.now())
            }
            return (results.flatMap(\.0), Double(results.map(\.2).max()! - results.map(\.1).min()!) / 1e9)
        }
        var rawSamples: [Double] = [], mineSamples: [Double] = []
        var rawRates: [Double] = [], mineRates: [Double] = []
        for round in -1..<5 {
            var rawSeconds = 0.0, mineSeconds = 0.0
            for _ in 0..<slices {
                let (rawSlice, rawSliceSeconds) = run { raw.write() }
                let (mineSlice, mineSliceSeconds) = run {
                    let bytes = UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: address), count: size)
                    try? journal.append(bytes)
                }
                guard round >= 0 else { continue }
                rawSamples += rawSlice
                mineSamples += mineSlice
                rawSeconds += rawSliceSeconds
                mineSeconds += mineSliceSeconds
            }
            guard round >= 0 else { continue }
            let appends = Double(2 * perSlice * slices)
            rawRates.append(appends / rawSeconds)
            mineRates.append(appends / mineSeconds)
        }
        let roundRatios = zip(mineRates, rawRates).map { $0 / $1 }
        let base = Distribution(rawSamples), mine = Distribution(mineSamples)
        let rawRate = Distribution(rawRates).median, mineRate = Distribution(mineRates).median
        let worstRound = roundRatios.min() ?? 0
        context.add(
            BenchRow(
                group: "journal", name: "append \(size) B, 2 threads contended", unit: "ns/op", median: mine.median,
                p99: mine.p99, p999: mine.p999, baseline: "raw write(2) from 2 threads, shared O_APPEND fd",
                baselineMedian: base.median, baselineP99: base.p99, ratio: mine.p999 / max(base.p999, 1),
                target: "p99.9 ≤ 100 µs", pass: mine.p999 <= 100_000,
                note: "raw p99.9 \(fixed(base.p999)) ns; ratio is p99.9 vs raw p99.9"))
        context.add(
            BenchRow(
                group: "journal", name: "append \(size) B, 2 threads total throughput", unit: "ops/s", median: mineRate,
                baseline: "raw write(2) from 2 threads", baselineMedian: rawRate, ratio: mineRate / rawRate,
                target: "≥ 0.8× raw in every round", pass: worstRound >= 0.8,
                note: "median rates of 5 rounds of 2 × \(perSlice * slices) appends a side, each side in \(slices) "
                    + "slices alternating raw and journal, after one round not counted; "
                    + "ratio per round " + roundRatios.map { fixed($0, 2) }.joined(separator: ", ")
                    + "; worst \(fixed(worstRound, 2))"))
    }

    // MARK: - Rotation

    /// Appends that rotate (and drop the oldest segment) against ordinary ones: the next segment
    /// is made ready (created, header written) and the unlink runs on the background queue, so
    /// neither must show up in the append's latency. Every segment carries a header, as the
    /// session journals of PerfCore do.
    private static func rotation(_ context: BenchContext, scratch: String) throws {
        let budget = 256 << 10
        let journal = try Journal(
            directory: URL(fileURLWithPath: scratch),
            configuration: .init(byteBudget: budget, segmentHeader: Data("perf-bench rotation session".utf8)))
        defer { journal.close() }
        let bytes = payload(512)
        defer { bytes.deallocate() }
        // About 250 appends fill a segment. A full run times ~600 rotations, so the p99 the target
        // is judged on is a percentile (the 6th slowest), not one preemption: with the 159
        // rotations of 40,000 appends it was the second slowest.
        let count = context.scaled(150_000, quick: 20_000)
        var rotating: [Double] = []
        var ordinary: [Double] = []
        // The append after each rotation wakes the journal's background thread once per segment
        // (close the retired descriptor, arm the reaper, prepare the next segment): ordinary, but
        // shown apart.
        var following: [Double] = []
        var segments = journal.statistics.segmentsCreated
        // Appends are paced 20 µs apart (spinning on the clock), so a segment fills in ~5 ms:
        // still hundreds of times faster than a real journal rotates, but the background queue
        // gets the time it would have in production to prepare the next segment.
        let pacingNs: UInt64 = 20_000
        for _ in 0..<count {
            let start = Bench.now()
            try? journal.append(bytes)
            let elapsed = Double(Bench.now() - start)
            let created = journal.statistics.segmentsCreated
            if created != segments {
                rotating.append(elapsed)
            } else {
                ordinary.append(elapsed)
                if rotating.count > following.count { following.append(elapsed) }
            }
            segments = created
            while Bench.now() - start < pacingNs {}
        }
        let dropped = journal.statistics.segmentsDropped
        // What the reaper keeps off the append path: unlinking a segment of the same size.
        let unlinkPath = scratch + "/unlink-probe"
        let segmentBytes = [UInt8](repeating: 1, count: budget / 2)
        var unlinks: [Double] = []
        for _ in 0..<context.scaled(50, quick: 10) {
            guard FileManager.default.createFile(atPath: unlinkPath, contents: Data(segmentBytes)) else { break }
            let start = Bench.now()
            unlink(unlinkPath)
            unlinks.append(Double(Bench.now() - start))
        }
        let unlinkCost = Distribution(unlinks.isEmpty ? [0] : unlinks)
        let idleWrite = firstWriteAfterIdle(
            scratch: scratch, frameBytes: 8 + bytes.count, idleNs: 5_000_000,
            count: context.scaled(300, quick: 40))
        let rotated = Distribution(rotating)
        let usual = Distribution(ordinary)
        let worst = rotating.max() ?? 0
        // On a shared machine the single slowest append of any kind is a preemption, so the
        // target is judged on the rotating appends' p99; their maximum (the p99.9 column, with
        // a few hundred rotations) is shown beside the ordinary appends' maximum and p99.
        context.add(
            BenchRow(
                group: "journal", name: "rotation: appends that rotate and drop", unit: "ns/op",
                median: rotated.median, p99: rotated.p99, p999: worst,
                baseline: "appends that do not rotate", baselineMedian: usual.median, baselineP99: usual.p99,
                ratio: rotated.p99 / max(usual.p99, 1),
                target: "p99 ≤ 50 µs", pass: rotated.p99 <= 50_000,
                note: "appends paced 20 µs apart (a segment every ~5 ms), each segment with a header; "
                    + "\(rotating.count) rotations, \(dropped) segments dropped; rotating p99 \(fixed(rotated.p99)) ns, "
                    + "max \(fixed(worst)) ns (p99.9 column) vs ordinary p99 \(fixed(usual.p99)) ns, "
                    + "max \(fixed(ordinary.max() ?? 0)) ns; the append after a rotation (one background wake-up "
                    + "per segment) median \(fixed(Distribution(following.isEmpty ? [0] : following).median)) ns, "
                    + "max \(fixed(following.max() ?? 0)) ns; a 128 KiB unlink(2), "
                    + "kept off the path by the reaper, takes \(fixed(unlinkCost.median)) ns median; "
                    + "raw write(2) of the same frame to a new file 5 ms after its header (what every "
                    + "rotating append does, and every append of a journal written less often than "
                    + "the kernel's clock tick): median \(fixed(idleWrite.median)) ns, "
                    + "p99 \(fixed(idleWrite.p99)) ns"))
    }

    /// What the kernel charges for the first write to a file in a new clock tick: a raw write(2)
    /// of `frameBytes` to a new file `idleNs` after its 35-byte header, as the rotation above
    /// writes a segment the preparer made ready about a segment's time earlier. The file's
    /// modification time is then out of date, so the write also updates the inode (on ext4 a
    /// journal handle); an ordinary append paced 20 µs apart pays that once per tick.
    private static func firstWriteAfterIdle(scratch: String, frameBytes: Int, idleNs: UInt64, count: Int)
        -> Distribution
    {
        let frame = [UInt8](repeating: 0x5A, count: frameBytes)
        let header = [UInt8](repeating: 0x48, count: 35)
        var samples: [Double] = []
        for index in 0..<count {
            let path = scratch + "/idle-write-\(index)"
            let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { break }
            _ = header.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            let created = Bench.now()
            while Bench.now() - created < idleNs {}
            let start = Bench.now()
            _ = frame.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            samples.append(Double(Bench.now() - start))
            close(descriptor)
            unlink(path)
        }
        return Distribution(samples.isEmpty ? [0] : samples)
    }

    // MARK: - fsync

    private static func fsyncAppend(_ context: BenchContext, scratch: String) throws {
        let journal = try Journal(
            directory: URL(fileURLWithPath: scratch), configuration: .init(byteBudget: 1 << 30, durability: .fsync))
        defer { journal.close() }
        let raw = try RawAppender(path: scratch + "/raw.bin", payloadSize: 64)
        let bytes = payload(64)
        defer { bytes.deallocate() }
        let rounds = 5
        let perRound = context.scaled(400, quick: 60) / rounds
        var mine: [Double] = []
        var base: [Double] = []
        for _ in 0..<rounds {
            base += latencies(perRound) {
                raw.write()
                fdatasync(raw.descriptor)
            }
            mine += latencies(perRound) { try? journal.append(bytes) }
        }
        let journalSync = Distribution(mine)
        let rawSync = Distribution(base)
        context.add(
            BenchRow(
                group: "journal", name: "append 64 B, .fsync", unit: "ns/op", median: journalSync.median,
                p99: journalSync.p99, p999: journalSync.p999, baseline: "raw write(2) + fdatasync(2)",
                baselineMedian: rawSync.median, baselineP99: rawSync.p99, ratio: journalSync.median / rawSync.median,
                target: "p50 ≤ 1.2× raw fdatasync", pass: journalSync.median <= 1.2 * rawSync.median))
    }

    // MARK: - Recovery and CRC

    private static func recovery(_ context: BenchContext, scratch: String) throws {
        let url = URL(fileURLWithPath: scratch)
        let totalBytes = context.quick ? 16 << 20 : 64 << 20
        let journal = try Journal(directory: url, configuration: .init(byteBudget: 4 * totalBytes))
        var random = BenchSplitMix(seed: 42)
        let bytes = payload(2000)
        defer { bytes.deallocate() }
        var written = 0
        while written < totalBytes {
            let size = 12 + Int(random.next() % 1989)
            try journal.append(UnsafeRawBufferPointer(rebasing: bytes[..<size]))
            written += size + 8
        }
        journal.close()
        var rates: [Double] = []
        var entries = 0
        var read = 0
        for _ in 0..<(context.quick ? 3 : 7) {
            let start = Bench.now()
            let recovery = try Journal.recover(directory: url)
            let elapsed = Double(Bench.now() - start)
            entries = recovery.entries.count
            read = recovery.bytesRead
            rates.append(Double(recovery.bytesRead) / elapsed)
        }
        // Baseline: reading the same files into memory, no validation.
        var readRates: [Double] = []
        let files = try FileManager.default.contentsOfDirectory(atPath: scratch).map { scratch + "/" + $0 }
        for _ in 0..<3 {
            let start = Bench.now()
            var total = 0
            for file in files { total += (FileManager.default.contents(atPath: file)?.count ?? 0) }
            readRates.append(Double(total) / Double(Bench.now() - start))
        }
        let rate = Distribution(rates)
        let readRate = Distribution(readRates)
        context.add(
            BenchRow(
                group: "journal", name: "recovery", unit: "GB/s", median: rate.median,
                baseline: "reading the segment files into memory", baselineMedian: readRate.median,
                ratio: rate.median / readRate.median, target: "≥ 0.8 GB/s", pass: rate.median >= 0.8,
                note: "\(read >> 20) MiB, \(entries) entries of 12–2000 B, page cache warm"))
    }

    private static func checksum(_ context: BenchContext) {
        let size = 1 << 20
        let bytes = payload(size)
        defer { bytes.deallocate() }
        var sink: UInt32 = 0
        let software = Bench.perOp(batches: context.scaled(50, quick: 10), iterations: 20) { iterations in
            for _ in 0..<iterations { sink &+= CRC32C.software(0, bytes) }
        }
        let softwareRate = Double(size) / software.median
        context.add(
            BenchRow(
                group: "journal", name: "CRC-32C (slicing-by-8)", unit: "GB/s", median: softwareRate,
                target: "≥ 0.8 GB/s (the fallback without the instruction)", pass: softwareRate >= 0.8,
                note: "\(fixed(software.median / 1000)) µs per MiB"))
        guard CRC32C.usesHardware else {
            Bench.blackHole(sink)
            return
        }
        let hardware = Bench.perOp(batches: context.scaled(50, quick: 10), iterations: 20) { iterations in
            for _ in 0..<iterations { sink &+= CRC32C.checksum(bytes) }
        }
        Bench.blackHole(sink)
        let hardwareRate = Double(size) / hardware.median
        context.add(
            BenchRow(
                group: "journal", name: "CRC-32C (CPU instruction, what appends use)", unit: "GB/s",
                median: hardwareRate, baseline: "slicing-by-8, same run", baselineMedian: softwareRate,
                ratio: hardwareRate / softwareRate, target: "≥ 2× slicing-by-8", pass: hardwareRate >= 2 * softwareRate,
                note: "\(fixed(hardware.median / 1000)) µs per MiB; 512 B costs ≈ \(fixed(hardware.median / 2048)) ns"))
    }
}
