// Concurrency soak: 8 threads of mixed begin/end/keyed/note/measure through the facade against a
// tiny ledger cap (constant rotation) with a hang watchdog running, while a monitor samples RSS
// and watches for a stall.
import CPerfAllocCounter
import Dispatch
import Foundation
import Glibc
import Perf
import PerfTestSupport
import Synchronization

enum ReliabilityConcurrency {
    private static let operations = Atomic<Int>(0)
    private static let stop = Atomic<Bool>(false)
    private static let hangs = Atomic<Int>(0)

    static func soak(seconds: Double, threads: Int, capBytes: Int) throws -> ScenarioResult {
        let scratch = try ScratchDirectory("soak")
        defer { scratch.remove() }
        Perf.install(
            Perf.Configuration(
                directory: scratch.url, app: Perf.AppInfo(name: "soak"), recording: .enabled, ledgerCapBytes: capBytes))
        let queue = DispatchQueue(label: "soak.watched")
        var configuration = Perf.HangWatchdog.Configuration()
        configuration.onEpisode = { episode in
            if episode.kind == .hang, episode.suppressed == nil { hangs.add(1, ordering: .relaxed) }
        }
        let watchdog = Perf.HangWatchdog(monitoring: .queue(queue), configuration: configuration)
        watchdog.start()
        let monitor = Monitor(stallSeconds: 10, ledger: scratch.url, threads: threads)
        monitor.start()
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        var ended = Stress.concurrently(threads: threads) { index in work(thread: index, until: deadline) }
        let halfway = monitor.samples.count / 2
        // Flat: the second half of the run adds less than 1 MiB (the first half holds warm-up:
        // thread stacks, malloc arenas, buffers).
        var growthMiB = growth(Array(monitor.samples.dropFirst(halfway)))
        var extended = ""
        if growthMiB >= 1 {
            // A rise once (a bounded queue, the ledger lane's 4,096-record backlog, filling for the
            // first time late in the run: heap in use stops at its ceiling) or growth without
            // bound? The same load for another half run tells them apart: memory that grows
            // without bound grows over that half too.
            let start = monitor.samples.count
            let more = DispatchTime.now().uptimeNanoseconds + UInt64(seconds / 2 * 1e9)
            let previous = ended
            ended = Stress.concurrently(threads: threads) { index in
                work(thread: index, until: more, from: previous[index])
            }
            extended =
                "; the second half grew \(String(format: "%.2f", growthMiB)) MiB, so the same load ran "
                + "\(Int(seconds / 2)) s more, and memory flat is judged on that extension"
            growthMiB = growth(Array(monitor.samples.dropFirst(start)))
        }
        monitor.finish()
        let rss = monitor.samples
        let kinds = Array(monitor.kinds.dropFirst(halfway))
        watchdog.stop()
        Perf.shutdown()
        let attribution = growthMiB < 1 ? "" : try attribute(threads: threads, capBytes: capBytes)

        let (events, summary) = try LedgerReader(directory: scratch.url).readAll()
        var gapped = 0
        var windowLines = 0
        for (thread, count) in ended.enumerated() {
            let sequences = events.filter { $0.detail == "/t\(thread)" }.compactMap(\.count).sorted()
            windowLines += sequences.count
            // The cap keeps only the newest lines, so each thread's window is a suffix of its ends:
            // gapless, no duplicates, up to its last end.
            if !sequences.isEmpty, sequences != Array((count - sequences.count)..<count) { gapped += 1 }
        }
        let snapshots = monitor.snapshots
        let dropped = events.filter { $0.kind == .dropped }.count
        let total = operations.load(ordering: .relaxed)
        let pass =
            gapped == 0 && summary.malformedLines == 0 && summary.tornTail == 0 && dropped == 0
            && windowLines > 0 && growthMiB < 1 && snapshots.malformed == 0 && snapshots.gaps == 0
            && snapshots.dropped == 0 && snapshots.lines > 0
        return ScenarioResult(
            scenario: "Concurrency",
            done: "\(threads) threads × \(Int(seconds)) s of mixed begin/end (under and over budget), keyed "
                + "begin/end, note and measure: \(total) operations; ledger cap \(capBytes / 1024) KiB; hang "
                + "watchdog running; RSS sampled \(rss.count) times",
            target: "no lost or interleaved line, no deadlock, memory flat",
            result: "\(gapped + snapshots.gaps) gaps, \(summary.malformedLines + snapshots.malformed) malformed "
                + "lines, \(dropped + snapshots.dropped) gap reports, no stall; RSS \(mib(rss.first)) → "
                + "\(mib(rss.last)) MiB (growth over the \(extended.isEmpty ? "second half" : "extension") "
                + "\(String(format: "%.2f", growthMiB)) MiB)",
            pass: pass,
            notes: "lines checked: \(snapshots.lines) in \(snapshots.taken) snapshots of the live file taken "
                + "every 100 ms (each thread's sequence gapless within a file) and \(windowLines) in the final "
                + "current + .prev; memory flat means < 1 MiB growth between the first and last five samples of the "
                + "second half" + extended + "; RSS at each fifth of the run: "
                + stride(from: 0, to: rss.count, by: max(1, rss.count / 5)).map { mib(rss[$0]) }.joined(separator: ", ")
                + " MiB; second half by kind (first → last sample): " + RSSKinds.change(kinds)
                + "; watchdog hangs: \(hangs.load(ordering: .relaxed))"
                + (attribution.isEmpty ? "" : "; RSS growth of each operation alone for 4 s: " + attribution),
            counts: [
                "operations": Double(total), "gaps": Double(gapped + snapshots.gaps),
                "snapshotLines": Double(snapshots.lines),
                "malformed": Double(summary.malformedLines), "dropped": Double(dropped),
                "rssGrowthMiB": growthMiB, "rssPeakMiB": Double(rss.max() ?? 0) / 1_048_576,
            ])
    }

    /// When the mix does not stay flat: RSS growth of each operation run alone (on every thread,
    /// after the soak warmed the allocator up), which names the operation that holds memory.
    private static func attribute(threads: Int, capBytes: Int) throws -> String {
        let scratch = try ScratchDirectory("soak-attribution")
        defer { scratch.remove() }
        Perf.install(
            Perf.Configuration(
                directory: scratch.url, app: Perf.AppInfo(name: "soak"), recording: .enabled, ledgerCapBytes: capBytes))
        defer { Perf.shutdown() }
        let kinds = [
            (0, "under-budget spans"), (4, "over-budget spans"), (5, "keyed begin/end"), (6, "notes"), (7, "measure"),
        ]
        return kinds.map { kind, label in
            let before = ProcessFigures.current().rssBytes ?? 0
            let deadline = DispatchTime.now().uptimeNanoseconds + 4_000_000_000
            let ends = Stress.concurrently(threads: threads) { index in work(thread: index, until: deadline, only: kind)
            }
            let grown = (ProcessFigures.current().rssBytes ?? 0) - before
            return
                "\(label) \(String(format: "%+.1f", Double(grown) / 1_048_576)) MiB (\(ends.reduce(0, +)) sequenced ends)"
        }.joined(separator: ", ")
    }

    /// One thread's mix (or only operation `only`); returns how many sequenced (over-budget,
    /// `count`-carrying) ends it made.
    private static func work(thread: Int, until deadline: UInt64, only: Int? = nil, from first: Int = 0) -> Int {
        let detail = "/t\(thread)"
        let key = "soak-key-\(thread)"
        var sequence = first
        var step = 0
        while step % 64 != 0 || DispatchTime.now().uptimeNanoseconds < deadline {
            switch only ?? step % 8 {
            case 0, 1, 2, 3:
                Perf.begin("soak.fast", slowMs: 1_000).end()
            case 4:
                Perf.begin("soak.slow", slowMs: 0).end(detail: detail, count: sequence)
                sequence += 1
            case 5:
                Perf.begin(key: key, "soak.keyed", slowMs: 0)
                Perf.end(key: key, detail: detail, count: sequence)
                sequence += 1
            case 6:
                Perf.note("soak.note")
            default:
                Perf.measure("soak.measure", slowMs: 0) { Stress.blackHole(step) }
            }
            step += 1
            operations.add(1, ordering: .relaxed)
        }
        return sequence
    }

    /// Resident memory by kind (anon: heap and stacks; file: mapped files such as the span memory;
    /// shmem) and the heap bytes in use, which leave out what the allocator keeps after a free.
    /// Names what a rise was made of.
    struct RSSKinds: Sendable {
        var resident = ResidentMemory()
        /// Heap bytes in use (`perf_heap_in_use_bytes`), or -1 where the allocator cannot say.
        var heapInUse = 0

        static func current() -> RSSKinds {
            RSSKinds(resident: .current(), heapInUse: Int(perf_heap_in_use_bytes()))
        }

        /// "anon 20.1 → 20.3, file 4.0 → 5.1, shmem 0.0 → 0.0 MiB".
        static func change(_ samples: [RSSKinds]) -> String {
            guard let first = samples.first, let last = samples.last else { return "no samples" }
            let (start, end) = (first.resident, last.resident)
            return "anon \(mib(start.anon)) → \(mib(end.anon)), file \(mib(start.file)) → \(mib(end.file)), "
                + "shmem \(mib(start.shmem)) → \(mib(end.shmem)) MiB; heap in use \(mib(first.heapInUse)) → "
                + "\(mib(last.heapInUse)) MiB"
        }
    }

    /// MiB added between the first and last five samples of `window` (the larger of each five).
    private static func growth(_ window: [Int]) -> Double {
        Double((window.suffix(5).max() ?? 0) - (window.prefix(5).max() ?? 0)) / 1_048_576
    }

    private static func mib(_ bytes: Int?) -> String { String(format: "%.1f", Double(bytes ?? 0) / 1_048_576) }

    /// What the snapshots of the live ledger file found.
    struct SnapshotFindings {
        var taken = 0
        var lines = 0
        var malformed = 0
        var gaps = 0
        var dropped = 0
    }

    /// Every 100 ms copies the live ledger file and checks it (every line whole, each thread's
    /// sequence gapless within the file); every 500 ms samples RSS; notices when no operation
    /// completes for `stallSeconds`.
    private final class Monitor: Sendable {
        private let stallSeconds: Double
        private let ledger: URL
        private let threads: Int
        private let state = Mutex<(samples: [Int], kinds: [RSSKinds], findings: SnapshotFindings)>(([], [], .init()))
        private let finished = DispatchSemaphore(value: 0)

        init(stallSeconds: Double, ledger: URL, threads: Int) {
            self.stallSeconds = stallSeconds
            self.ledger = ledger
            self.threads = threads
        }

        var samples: [Int] { state.withLock { $0.samples } }
        /// The kinds of resident memory at each RSS sample.
        var kinds: [RSSKinds] { state.withLock { $0.kinds } }
        var snapshots: SnapshotFindings { state.withLock { $0.findings } }

        func start() {
            stop.store(false, ordering: .relaxed)
            Thread { [self] in
                var lastCount = -1
                var lastProgress = monotonicSeconds()
                var tick = 0
                let copy = try? ScratchDirectory("soak-snapshot")
                while !stop.load(ordering: .acquiring) {
                    // The sampling period, not synchronisation: the soak runs for a fixed time.
                    var period = timespec(tv_sec: 0, tv_nsec: 100_000_000)
                    nanosleep(&period, nil)
                    tick += 1
                    let count = operations.load(ordering: .relaxed)
                    if count != lastCount {
                        lastCount = count
                        lastProgress = monotonicSeconds()
                    } else if monotonicSeconds() - lastProgress > stallSeconds {
                        // A deadlock never lets the workers return: report it as a miss and end the process.
                        ScenarioResult(
                            scenario: "Concurrency", done: "soak stalled", target: "no deadlock",
                            result: "no operation completed for \(Int(stallSeconds)) s", pass: false
                        ).emit()
                        exit(1)
                    }
                    if let copy { inspect(into: copy.url) }
                    if tick % 5 == 0, let rss = ProcessFigures.current().rssBytes {
                        let kinds = RSSKinds.current()
                        state.withLock {
                            $0.samples.append(Int(rss))
                            $0.kinds.append(kinds)
                        }
                    }
                }
                copy?.remove()
                finished.signal()
            }.start()
        }

        /// Copies the live file (a rename may race the copy: then there is nothing to check, or a
        /// file that started over) and reads it; the last line may be mid-write, which the reader
        /// counts as a torn tail.
        private func inspect(into copy: URL) {
            let target = copy.appendingPathComponent(LedgerWriter.fileName)
            try? FileManager.default.removeItem(at: target)
            guard let bytes = Self.readLive(ledger.appendingPathComponent(LedgerWriter.fileName).path),
                FileManager.default.createFile(atPath: target.path, contents: bytes),
                let (events, summary) = try? LedgerReader(directory: copy).readAll()
            else { return }
            var gaps = 0
            for thread in 0..<threads {
                let sequences = events.filter { $0.detail == "/t\(thread)" }.compactMap(\.count)
                if let first = sequences.first, sequences != Array(first..<(first + sequences.count)) { gaps += 1 }
            }
            state.withLock {
                $0.findings.taken += 1
                $0.findings.lines += events.count
                $0.findings.malformed += summary.malformedLines
                $0.findings.gaps += gaps
                $0.findings.dropped += events.filter { $0.kind == .dropped }.count
            }
        }

        /// The file's bytes, read until end of file (at most 16 MiB), or nil when it cannot be opened.
        ///
        /// Not `FileManager.copyItem`: its copy loop calls sendfile(2) for the size fstat gave and
        /// spins forever when the file shrinks under it (a ledger writer truncating to start
        /// over), which hung this monitor at full CPU in one local run.
        private static func readLive(_ path: String) -> Data? {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            var bytes = Data()
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            while bytes.count < 16 << 20 {
                let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                bytes.append(contentsOf: chunk[0..<count])
            }
            return bytes
        }

        func finish() {
            stop.store(true, ordering: .releasing)
            finished.wait()
        }
    }
}
