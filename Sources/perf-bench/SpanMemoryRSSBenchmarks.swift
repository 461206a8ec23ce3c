// The span memory's resident cost: 1,000 span names × 32 threads, each thread ending spans of
// three durations under every name, against a heap-allocated histogram layout emulated in the
// same run (OldLayoutHistograms). Each variant runs in a fresh child process (perf-bench
// re-executed through /proc/self/exe with a hidden subcommand) that reads VmRSS before and after
// recording, so neither a previous group's heap nor another variant's pages count.
import CPerfShims
import Foundation
import Glibc
import PerfCore
import PerfTestSupport

enum SpanMemoryRSS {
    /// The hidden subcommand: `perf-bench --span-memory-rss-child <variant> <names> <directory>`.
    static let childCommand = "--span-memory-rss-child"
    static let threads = 32
    /// Three durations an octave or more apart, so each lands in a bucket chunk of its own.
    static let durations: [UInt64] = [2_000, 45_000, 1_300_000]
    static let memoryBytes = 64 << 20

    enum Variant: String, CaseIterable {
        case file, anonymous
        case oldLayout = "old-layout"
    }

    /// What a child reports, in bytes (VmRSS and its file and anonymous parts, after minus before).
    struct Measurement {
        var rss = 0
        var rssFile = 0
        var rssAnon = 0
        var arenaUsed = 0
        var dropped = 0
        var seconds = 0.0
    }

    // MARK: - Parent

    static func run(_ context: BenchContext) throws {
        let names = context.scaled(SpanMemoryBenchmarkNames.all.count, quick: 200)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "perf-bench-span-memory-rss-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var results: [Variant: Measurement] = [:]
        for variant in Variant.allCases {
            results[variant] = try measureInChild(variant, names: names, directory: directory.path)
        }
        let old = results[.oldLayout]!
        // The row names stay those of the full run, so quick and full rows compare (and budgets
        // match); the note opens with the smaller count when --quick used fewer names.
        let scope =
            (names < SpanMemoryBenchmarkNames.all.count ? "--quick: only \(names) of the 1,000 names; " : "")
            + "\(names) names × \(threads) threads (16 exclusive + 16 shared stripes) × 3 durations"
        let baselineName = "layout before issue 14, emulated (same run)"
        for (variant, title) in [(Variant.file, "file-backed span memory"), (.anonymous, "anonymous span memory")] {
            let measured = results[variant]!
            let fits = mib(measured.rss) <= 64
            context.add(
                BenchRow(
                    group: "span-memory", name: "RSS, 1,000 names × 32 threads, \(title)", unit: "MiB",
                    median: mib(measured.rss), baseline: baselineName, baselineMedian: mib(old.rss),
                    ratio: Double(measured.rss) / Double(max(old.rss, 1)), target: "≤ 64 MiB",
                    pass: fits && measured.dropped == 0,
                    note: "\(scope); VmRSS delta in a fresh child: file \(fmt(mib(measured.rssFile))) MiB, anon "
                        + "\(fmt(mib(measured.rssAnon))) MiB; arena used \(fmt(mib(measured.arenaUsed))) MiB of a "
                        + "\(memoryBytes >> 20) MiB mapping (nameCapacity 1024, no ring); \(measured.dropped) records "
                        + "dropped; \(fmt(measured.seconds, digits: 2)) s"
                        + (variant == .file ? "; file on \(filesystem(directory.path))" : ""),
                    samples: 1))
        }
        context.add(
            BenchRow(
                group: "span-memory", name: "RSS, 1,000 names × 32 threads, \(baselineName)", unit: "MiB",
                median: mib(old.rss),
                note: "\(scope); what f48aa16 did: per name a 320-byte entry, per (name, stripe) one 16,960-byte "
                    + "64-aligned allocation zeroed in full (2,120 words: 8 header words + 2,112 buckets); "
                    + "VmRSS delta file \(fmt(mib(old.rssFile))) MiB, anon \(fmt(mib(old.rssAnon))) MiB; "
                    + "\(fmt(old.seconds, digits: 2)) s",
                samples: 1))
    }

    private static func measureInChild(_ variant: Variant, names: Int, directory: String) throws -> Measurement {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executablePath())
        process.arguments = [childCommand, variant.rawValue, String(names), directory]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0, let measurement = parse(text) else {
            throw BenchFailure(
                "span memory RSS child \(variant.rawValue) failed (status "
                    + "\(process.terminationStatus)): \(text)")
        }
        return measurement
    }

    static func executablePath() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return CommandLine.arguments[0] }
        return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func parse(_ text: String) -> Measurement? {
        var fields: [String: String] = [:]
        for pair in text.split(whereSeparator: \.isWhitespace) {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        guard let rss = fields["rss"].flatMap(Int.init), let file = fields["rss_file"].flatMap(Int.init),
            let anon = fields["rss_anon"].flatMap(Int.init), let arena = fields["arena_used"].flatMap(Int.init),
            let dropped = fields["dropped"].flatMap(Int.init), let seconds = fields["seconds"].flatMap(Double.init)
        else { return nil }
        return Measurement(
            rss: rss, rssFile: file, rssAnon: anon, arenaUsed: arena, dropped: dropped, seconds: seconds)
    }

    /// The name of the filesystem holding `path`, for notes.
    static func filesystem(_ path: String) -> String {
        // /proc/mounts: device, mount point, type, …; the longest mount point above `path` holds it.
        guard let mounts = try? String(contentsOfFile: "/proc/mounts", encoding: .utf8) else { return "?" }
        var best = (point: "", type: "?")
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count > 2 else { continue }
            let point = String(fields[1])
            let under = path == point || path.hasPrefix(point == "/" ? "/" : point + "/")
            if under && point.count > best.point.count { best = (point, String(fields[2])) }
        }
        return best.type
    }

    private static func mib(_ bytes: Int) -> Double { Double(bytes) / 1_048_576 }

    private static func fmt(_ value: Double, digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }

    // MARK: - Child

    /// The child: records, measures, prints `key=value` pairs on one line and exits.
    static func child(_ arguments: [String]) -> Never {
        guard arguments.count == 3, let variant = Variant(rawValue: arguments[0]), let count = Int(arguments[1]),
            (1...SpanMemoryBenchmarkNames.all.count).contains(count)
        else {
            FileHandle.standardError.write(Data("usage: perf-bench \(childCommand) <variant> <names> <dir>\n".utf8))
            exit(2)
        }
        let names = Array(SpanMemoryBenchmarkNames.all.prefix(count))
        let configuration = SpanMemory.Configuration(bytes: memoryBytes, nameCapacity: 1024, ringCapacity: 0)
        let memory: SpanMemory?
        let recorder: @Sendable (Int, UInt64) -> Void
        do {
            switch variant {
            case .file:
                memory = try SpanMemory.create(path: arguments[2] + "/spans-rss.map", configuration)
            case .anonymous:
                memory = try SpanMemory.anonymous(configuration)
            case .oldLayout:
                memory = nil
            }
        } catch {
            FileHandle.standardError.write(Data("perf-bench: \(error)\n".utf8))
            exit(1)
        }
        if let memory {
            let registry = HistogramRegistry(memory: memory)
            recorder = { index, nanos in registry.record(names[index], nanos: nanos) }
        } else {
            let histograms = OldLayoutHistograms(names: count)
            recorder = { index, nanos in histograms.record(index, nanos: nanos) }
        }
        let started = Bench.now()
        let (before, after) = recordFromThreads(names: count, recorder)
        let seconds = Double(Bench.now() - started) / 1e9
        let line =
            "rss=\(after.rss - before.rss) rss_file=\(after.file - before.file) rss_anon=\(after.anon - before.anon) "
            + "arena_used=\(memory?.arenaUsedBytes ?? 0) dropped=\(memory?.droppedRecordCount ?? 0) "
            + "seconds=\(seconds)\n"
        FileHandle.standardOutput.write(Data(line.utf8))
        memory?.close()
        exit(0)
    }

    /// Starts every thread and parks it (stacks touched, stripe index taken) before the first
    /// reading; all stay alive until the second, so 16 own a stripe and 16 share the others.
    private static func recordFromThreads(
        names: Int, _ record: @escaping @Sendable (Int, UInt64) -> Void
    ) -> (before: ResidentMemory, after: ResidentMemory) {
        let ready = DispatchSemaphore(value: 0)
        let start = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let leave = DispatchSemaphore(value: 0)
        for thread in 0..<threads {
            Thread {
                _ = perf_thread_stripe()
                ready.signal()
                start.wait()
                for index in 0..<names {
                    for (step, nanos) in durations.enumerated() {
                        record(index, nanos + UInt64(thread &* 7 &+ step))
                    }
                }
                done.signal()
                leave.wait()
            }.start()
        }
        for _ in 0..<threads { ready.wait() }
        let before = ResidentMemory.current()
        for _ in 0..<threads { start.signal() }
        for _ in 0..<threads { done.wait() }
        let after = ResidentMemory.current()
        for _ in 0..<threads { leave.signal() }
        return (before, after)
    }
}

/// Heap-allocated histogram memory, emulated for the baseline: a table of entry pointers; per
/// name, on first record, a 320-byte entry of 32 stripe pointers; per (name, stripe), on its first
/// record, one 16,960-byte 64-aligned block zeroed in full (touching every page), then the same
/// increments: plain stores on an exclusive stripe, atomic adds on a shared one. It shows what
/// span memory saves by not giving every (name, stripe) its own zeroed block.
final class OldLayoutHistograms: @unchecked Sendable {
    // @unchecked: the table and blocks are written only through the C atomics or before publication.
    static let stripeWords = 8 + 2_112
    static let entryWords = 8 + 32
    private let table: UnsafeMutablePointer<UnsafeRawPointer?>

    init(names: Int) {
        table = .allocate(capacity: names)
        table.initialize(repeating: nil, count: names)
    }

    func record(_ name: Int, nanos: UInt64) {
        let entry = UnsafeMutablePointer(mutating: claim(table + name, words: Self.entryWords, minimum: false))
        let slots = UnsafeMutableRawPointer(entry + 8).assumingMemoryBound(to: UnsafeRawPointer?.self)
        let index = Int(perf_thread_stripe())
        let words = UnsafeMutablePointer(mutating: claim(slots + index, words: Self.stripeWords, minimum: true))
        let bucket = words + 8 + Self.bucket(nanos)
        if index < Int(PERF_EXCLUSIVE_STRIPES) {
            if nanos < perf_atomic_load_u64(words + 1) { perf_atomic_store_u64(words + 1, nanos) }
            if nanos > perf_atomic_load_u64(words + 2) { perf_atomic_store_u64(words + 2, nanos) }
            perf_atomic_store_u64(bucket, perf_atomic_load_u64(bucket) &+ 1)
            perf_atomic_store_u64(words, perf_atomic_load_u64(words) &+ nanos)
        } else {
            var low = perf_atomic_load_u64(words + 1)
            while nanos < low, perf_atomic_cas_u64(words + 1, low, nanos) == 0 { low = perf_atomic_load_u64(words + 1) }
            var high = perf_atomic_load_u64(words + 2)
            while nanos > high, perf_atomic_cas_u64(words + 2, high, nanos) == 0 {
                high = perf_atomic_load_u64(words + 2)
            }
            perf_atomic_add_u64(bucket, 1)
            perf_atomic_add_u64(words, nanos)
        }
    }

    /// The block a slot points to, allocated, zeroed and published on first use (the loser of a
    /// race frees its copy).
    private func claim(_ slot: UnsafeMutablePointer<UnsafeRawPointer?>, words: Int, minimum: Bool)
        -> UnsafePointer<UInt64>
    {
        if let found = perf_atomic_load_ptr_acquire(slot) { return found.assumingMemoryBound(to: UInt64.self) }
        let raw = UnsafeMutableRawPointer.allocate(byteCount: words * 8, alignment: 64)
        let fresh = raw.initializeMemory(as: UInt64.self, repeating: 0, count: words)
        if minimum { fresh[1] = .max }
        if perf_atomic_cas_ptr(slot, nil, raw) != 0 { return UnsafePointer(fresh) }
        raw.deallocate()
        return perf_atomic_load_ptr_acquire(slot)!.assumingMemoryBound(to: UInt64.self)
    }

    /// The emulated layout's bucket geometry: 64 sub-buckets per octave from 2^9 to 2^42 ns.
    private static func bucket(_ nanos: UInt64) -> Int {
        let clamped = min(max(nanos, 1 << 9), (1 << 42) - 1)
        let exponent = 63 - clamped.leadingZeroBitCount
        return (exponent - 9) << 6 | Int(truncatingIfNeeded: clamped >> UInt64(exponent - 6)) & 63
    }
}

/// A benchmark that could not run.
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
