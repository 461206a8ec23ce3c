// Install/shutdown cycles free what each runtime held: RSS stays flat over 1,000
// cycles in a child, a shut-down runtime is deallocated, and spans racing a shutdown on other
// threads never touch freed memory (the reader sections and membarrier grace period).
import CPerfAllocCounter
import CPerfShims
import Foundation
import PerfCore
import PerfTestSupport
import Synchronization
import Testing

@testable import Perf

@Suite struct InstallCycleMemoryTests {
    /// 1,000 cycles in a fresh child: the second 500 add at most 1 MiB of RSS (a runtime kept for
    /// good would be tens of KiB per cycle: megabytes over those 500).
    @Test(
        .enabled(
            if: perf_alloc_counter_available() != 0,
            "RSS is not the program's in a sanitizer build (AddressSanitizer's quarantine keeps freed memory)"))
    func thousandCyclesKeepResidentMemoryFlat() throws {
        let child = try ChildProcess(executable: BuildProducts.testChild, arguments: ["install-cycles", "-", "1000"])
        let lines = child.readRemainingLines()
        #expect(child.wait() == 0, "\(lines)")
        var rss: [Int: UInt64] = [:]
        var counts: [String: Int] = [:]
        for line in lines {
            let fields = line.split(separator: " ")
            if fields.count == 3, fields[0] == "rss", let cycle = Int(fields[1]), let bytes = UInt64(fields[2]) {
                rss[cycle] = bytes
            } else if fields.count == 2, let value = Int(fields[1]) {
                counts[String(fields[0])] = value
            }
        }
        let half = try #require(rss[500], "\(lines)")
        let end = try #require(rss[1000], "\(lines)")
        #expect(end <= half + (1 << 20), "RSS grew \(Int64(end) - Int64(half)) bytes over cycles 501–1000: \(lines)")
        #expect(counts["freed"] == 1000, "\(lines)")
        #expect(counts["kept"] == 0, "\(lines)")
    }
}

@Suite struct ReaderSectionTests {
    /// A grace period started while another thread is inside a section returns only after that
    /// thread left it (its last store inside is seen); one asked for inside a section refuses.
    @Test func synchronizeWaitsForAThreadInsideASection() {
        let entered = DispatchSemaphore(value: 0)
        let leave = DispatchSemaphore(value: 0)
        let left = Atomic<Bool>(false)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let section = perf_reader_enter()
            entered.signal()
            leave.wait()
            left.store(true, ordering: .relaxed)
            perf_reader_exit(section)
            done.signal()
        }
        entered.wait()
        let sawLeft = Atomic<Int>(-1)
        let synchronized = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let result = perf_reader_synchronize()
            sawLeft.store(result == 0 && left.load(ordering: .relaxed) ? 1 : 0, ordering: .relaxed)
            synchronized.signal()
        }
        leave.signal()
        synchronized.wait()
        done.wait()
        #expect(sawLeft.load(ordering: .relaxed) == 1)

        let section = perf_reader_enter()
        #expect(perf_reader_synchronize() == 1)
        perf_reader_exit(section)
        #expect(perf_reader_synchronize() == 0)
    }
}

extension PerfGlobalStateTests {
    @Suite struct InstallCycleTests {
        private static func install() {
            Perf.install(
                Perf.Configuration(app: Perf.AppInfo(name: "cycles"), recording: .disabled), environment: [:],
                clock: SystemClock(), report: { _ in })
        }

        @Test func aShutDownRuntimeIsDeallocatedAndItsHistogramsKept() throws {
            Perf.shutdown()
            Self.install()
            let runtime = Weak(PerfState.runtime())
            #expect(runtime.value != nil)
            let before = Perf.retiredRuntimeCounts().freed
            Perf.begin("cycles.kept", slowMs: 60_000).end()
            Perf.shutdown()
            #expect(runtime.value == nil, "the runtime outlived its shutdown")
            #expect(Perf.retiredRuntimeCounts().freed == before + 1)
            #expect((Perf.spanHistograms()["cycles.kept"]?.count ?? 0) >= 1)
        }

        /// `Perf.begin` skips the reader section only for the recorder that reads the span clock:
        /// the marker names the installed recorder then, is 0 for a test clock's recorder (whose
        /// spans must be timed by that clock) and is cleared by shutdown with the slot.
        @Test func theSpanClockMarkerFollowsTheInstalledRecorder() {
            Perf.shutdown()
            Self.install()
            let installed = PerfState.recorderSlot.load(ordering: .acquiring).map { UInt(bitPattern: $0.toOpaque()) }
            #expect(installed != nil)
            #expect(perf_span_clock_recorder_load() == installed)
            Perf.shutdown()
            #expect(perf_span_clock_recorder_load() == 0)
            let clock = ManualClock()
            Perf.install(
                Perf.Configuration(app: Perf.AppInfo(name: "cycles"), recording: .disabled), environment: [:],
                clock: clock, report: { _ in })
            defer { Perf.shutdown() }
            #expect(Perf.isInstalled)
            #expect(perf_span_clock_recorder_load() == 0)
            let span = Perf.begin("cycles.manual", slowMs: 60_000)
            clock.advance(byNanos: 7_000_000)
            span.end()
            #expect(Perf.spanHistograms()["cycles.manual"]?.maxNanos == 7_000_000)
        }

        /// A thread inside a section when shutdown starts keeps a usable recorder until it leaves:
        /// it ends a span through the recorder it loaded 50 ms after the slot was cleared (the
        /// wait only widens the window a missing grace period would free the runtime in; nothing
        /// waits on it), and that late span is in the merged histograms.
        @Test func aSectionOpenAcrossShutdownKeepsItsRecorder() throws {
            Perf.shutdown()
            Self.install()
            let loaded = DispatchSemaphore(value: 0)
            let finished = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                let section = perf_reader_enter()
                let recorder = PerfState.recorderSlot.load(ordering: .acquiring)
                loaded.signal()
                while Perf.isInstalled {}
                let widen = monotonicSeconds() + 0.05
                while monotonicSeconds() < widen {}
                recorder?._withUnsafeGuaranteedRef { recorder in
                    recorder.end(recorder.begin("cycles.late", budgetNanos: 60_000_000_000, site: CallSite()))
                }
                perf_reader_exit(section)
                finished.signal()
            }
            loaded.wait()
            Perf.shutdown()
            finished.wait()
            #expect((Perf.spanHistograms()["cycles.late"]?.count ?? 0) >= 1)
        }

        /// Threads begin and end spans (scoped, keyed, measured, ended across a cycle) while this
        /// thread installs and shuts down 300 times: no crash, no use after free (run it under
        /// `--sanitize=address`), and every retired runtime freed.
        @Test func spansRacingInstallAndShutdownNeverTouchFreedMemory() throws {
            let seed = SeededRandom.makeSeed()
            var random = SeededRandom(seed: seed)
            Perf.shutdown()
            let stop = Atomic<Bool>(false)
            let ended = Atomic<Int>(0)
            let finished = DispatchSemaphore(value: 0)
            let workers = 3
            for worker in 0..<workers {
                let workerSeed = random.next()
                Thread.detachNewThread {
                    var random = SeededRandom(seed: workerSeed)
                    var held: Perf.Span? = nil
                    while !stop.load(ordering: .relaxed) {
                        switch random.next() % 6 {
                        case 0: Perf.begin("cycles.fast", slowMs: 60_000).end()
                        case 1: Perf.begin("cycles.slow", slowMs: 0).end(detail: "/v1/x", count: worker)
                        case 2: Perf.measure("cycles.measure", slowMs: 60_000) { _ = ended.load(ordering: .relaxed) }
                        case 3:
                            Perf.begin(key: "k\(worker)", "cycles.keyed", slowMs: 60_000)
                            Perf.end(key: "k\(worker)")
                        case 4: held.take()?.end()
                        default: if held == nil { held = Perf.begin("cycles.held", slowMs: 60_000) }
                        }
                        ended.add(1, ordering: .relaxed)
                    }
                    held.take()?.end()
                    finished.signal()
                }
            }
            let freedBefore = Perf.retiredRuntimeCounts().freed
            let cycles = 300
            for _ in 0..<cycles {
                Self.install()
                // Let the workers run into this runtime for a seeded number of their spans.
                let target = ended.load(ordering: .relaxed) + Int(random.next() % 64)
                while ended.load(ordering: .relaxed) < target {}
                Perf.shutdown()
            }
            stop.store(true, ordering: .relaxed)
            for _ in 0..<workers { finished.wait() }
            #expect(Perf.retiredRuntimeCounts().freed == freedBefore + cycles, "seed \(seed)")
            #expect(Perf.retiredRuntimeCounts().kept == 0, "seed \(seed)")
        }
    }
}

/// A weak reference that can be read after its object is gone.
private final class Weak<Object: AnyObject> {
    weak var value: Object?
    init(_ value: Object?) { self.value = value }
}
