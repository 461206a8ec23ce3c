// Benchmarks of Perf.HangWatchdog: idle CPU per watchdog, detection error on injected blocks,
// and the cost of one stack sample and of symbolication, each beside its baseline.
import CPerfShims
import Foundation
import Perf
import Synchronization

enum WatchdogBenchmarks {
    static let group = BenchGroup(name: "watchdog") { context in
        idleCPU(context, intervalMs: 50, target: 0.3)
        idleCPU(context, intervalMs: 100, target: nil)
        detection(context)
    }

    /// CPU of the watchdog thread over an idle period, as a percentage of one core.
    private static func idleCPU(_ context: BenchContext, intervalMs: Int, target: Double?) {
        let seconds = context.quick ? 2.0 : 6.0
        let queue = DispatchQueue(label: "perf-bench.watchdog.idle")
        var configuration = Perf.HangWatchdog.Configuration()
        configuration.interval = .milliseconds(intervalMs)
        let watchdog = Perf.HangWatchdog(monitoring: .queue(queue), configuration: configuration)
        let processBefore = processCPUNanos()
        let wallBefore = Bench.now()
        watchdog.start()
        Thread.sleep(forTimeInterval: seconds)
        watchdog.stop()
        let wall = Double(Bench.now() - wallBefore)
        let statistics = watchdog.statistics
        let percent = Double(statistics.cpuNanos) / wall * 100
        let processPercent = Double(processCPUNanos() - processBefore) / wall * 100
        context.add(
            BenchRow(
                group: "watchdog", name: "idle CPU per watchdog @\(intervalMs) ms", unit: "% core",
                median: percent, p99: nil, p999: nil, baseline: "whole process (watchdog + pings + bench)",
                baselineMedian: processPercent, baselineP99: nil, ratio: nil,
                target: target.map { "≤ \($0) % of a core" }, pass: target.map { percent <= $0 },
                allocationsPerOp: nil,
                note: String(
                    format: "%llu ticks, tick lateness p99 %.2f ms, max %.2f ms",
                    statistics.ticks, Double(statistics.tickLatenessP99Nanos) / 1e6,
                    Double(statistics.maxTickLatenessNanos) / 1e6)))
    }

    /// Injects blocks of known length and compares the episode's midpoint and bounds to them.
    private static func detection(_ context: BenchContext) {
        let queue = DispatchQueue(label: "perf-bench.watchdog.detect")
        let episodes = Mutex<[Perf.HangWatchdog.Episode]>([])
        var configuration = Perf.HangWatchdog.Configuration()
        configuration.startupGrace = .zero
        configuration.culpritCooldown = .zero
        configuration.onEpisode = { episode in episodes.withLock { $0.append(episode) } }
        let watchdog = Perf.HangWatchdog(monitoring: .queue(queue), configuration: configuration)
        watchdog.start()
        Thread.sleep(forTimeInterval: 0.3)
        let durations =
            Array(repeating: 300, count: context.quick ? 4 : 20) + Array(repeating: 1_000, count: context.quick ? 1 : 5)
        var errors: [Double] = []
        var widths: [Double] = []
        var missed = 0
        var symbolication: [Double] = []
        var lastStatistics = watchdog.statistics
        // A fixed seed: every run injects at the same phases. Without a random phase the loop
        // locks onto the ping schedule and biases the midpoint.
        var generator = BenchSplitMix(seed: 0x5EED_0005)
        for milliseconds in durations {
            Thread.sleep(forTimeInterval: Double(generator.next() % 50_000) / 1e6)
            let before = episodes.withLock { $0.count }
            let actual = Mutex<Double>(0)
            let start = Bench.now()
            queue.async { actual.withLock { $0 = injectedBlock(milliseconds: milliseconds) } }
            while episodes.withLock({ $0.count }) == before && Bench.now() - start < 5_000_000_000 {
                Thread.sleep(forTimeInterval: 0.01)
            }
            Thread.sleep(forTimeInterval: 0.2)
            let found = episodes.withLock { $0.count > before ? $0[before] : nil }
            let statistics = watchdog.statistics
            if let found {
                let truth = actual.withLock { $0 }
                errors.append(abs(found.durationMs - truth))
                widths.append(found.upperMs - found.lowerMs)
                symbolication.append(Double(statistics.symbolicationNanos - lastStatistics.symbolicationNanos))
            } else {
                missed += 1
            }
            lastStatistics = statistics
        }
        watchdog.stop()
        let statistics = watchdog.statistics
        let errorDistribution = Distribution(errors)
        context.add(
            BenchRow(
                group: "watchdog", name: "detection error |midpoint − actual| (300 ms and 1 s blocks)", unit: "ms",
                median: errorDistribution.median, p99: errorDistribution.p99, p999: nil,
                baseline: "bound width (upper − lower)", baselineMedian: Distribution(widths).median,
                baselineP99: Distribution(widths).p99, ratio: nil, target: "≤ 25 ms (half the interval)",
                pass: errorDistribution.p99 <= 25 && missed == 0, allocationsPerOp: nil,
                note: "\(errors.count) detected, \(missed) missed"))
        let episodesSeen = statistics.hangs + statistics.hitches
        let signalsPerEpisode = episodesSeen > 0 ? Double(statistics.signalsSent) / Double(episodesSeen) : 0
        context.add(
            BenchRow(
                group: "watchdog", name: "signals sent per episode (block in a system call)", unit: "signals",
                median: signalsPerEpisode, p99: nil, p999: nil, baseline: "samples taken per episode",
                baselineMedian: episodesSeen > 0 ? Double(statistics.samplesTaken) / Double(episodesSeen) : nil,
                baselineP99: nil, ratio: nil, target: "0 (a blocked thread is read, never signalled)",
                pass: statistics.signalsSent == 0 && statistics.samplesTaken > 0, allocationsPerOp: nil,
                note: "\(statistics.samplesWithoutSignal) samples without a signal, \(statistics.signalsSent) signals, "
                    + "\(episodesSeen) episodes"))
        let perSample =
            statistics.samplesTaken > 0 ? Double(statistics.sampleNanos) / Double(statistics.samplesTaken) : 0
        let unwind = blockedThreadUnwindCost(count: context.quick ? 200 : 1_000)
        let backtraceCost = ownBacktraceCost()
        context.add(
            BenchRow(
                group: "watchdog", name: "one stack sample of a blocked thread", unit: "ns",
                median: unwind.median, p99: unwind.p99, p999: nil, baseline: "backtrace() of the calling thread",
                baselineMedian: backtraceCost.median, baselineP99: backtraceCost.p99,
                ratio: backtraceCost.median > 0 ? unwind.median / backtraceCost.median : nil, target: nil, pass: nil,
                allocationsPerOp: nil,
                note:
                    "perf_remote_unwind of a thread in usleep: /proc syscall line twice, /proc/self/maps, stack copy, "
                    + String(format: "CFI walk; no signal. Mean per sample in the episodes above: %.0f ns", perSample)))
        let symbolicationDistribution = Distribution(symbolication)
        context.add(
            BenchRow(
                group: "watchdog", name: "symbolication + demangling per episode", unit: "ns",
                median: symbolicationDistribution.median, p99: symbolicationDistribution.p99, p999: nil,
                baseline: "first episode (loads the ELF symbol tables)", baselineMedian: symbolication.first,
                baselineP99: nil, ratio: nil, target: nil, pass: nil, allocationsPerOp: nil,
                note: "off the hot path, on the watchdog thread"))
    }

    /// One `usleep` for the whole block: the blocked thread sits in a system call, as a service
    /// waiting on I/O does, and must be sampled without a signal (which would cut the sleep short).
    @inline(never)
    private static func injectedBlock(milliseconds: Int) -> Double {
        let start = Bench.now()
        usleep(useconds_t(milliseconds * 1000))
        return Double(Bench.now() - start) / 1e6
    }

    /// `perf_remote_unwind` on a thread parked in one long `usleep`, as the watchdog reads a
    /// blocked thread (the thread is never signalled, so its sleep is not cut short).
    private static func blockedThreadUnwindCost(count: Int) -> Distribution {
        let parked = Atomic<Int32>(0)
        let sleeper = Thread {
            parked.store(perf_gettid(), ordering: .releasing)
            usleep(30_000_000)
        }
        sleeper.start()
        var tid: Int32 = 0
        var call = perf_thread_syscall()
        while tid == 0 || call.state != Int32(PERF_THREAD_BLOCKED) {
            tid = parked.load(ordering: .acquiring)
            if tid != 0 { perf_thread_read_syscall(tid, &call) }
            sched_yield()
        }
        var frames = [UInt](repeating: 0, count: Int(PERF_STACK_MAX_FRAMES))
        return Bench.latencies(count: count) {
            Bench.blackHole(
                frames.withUnsafeMutableBufferPointer {
                    perf_remote_unwind(tid, $0.baseAddress, Int32($0.count), &call)
                })
        }
    }

    private static func ownBacktraceCost() -> Distribution {
        var frames = [UnsafeMutableRawPointer?](repeating: nil, count: 128)
        return Bench.latencies(count: 2_000) {
            Bench.blackHole(frames.withUnsafeMutableBufferPointer { backtrace($0.baseAddress, 128) })
        }
    }

    private static func processCPUNanos() -> UInt64 {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let user = UInt64(usage.ru_utime.tv_sec) * 1_000_000_000 + UInt64(usage.ru_utime.tv_usec) * 1_000
        let system = UInt64(usage.ru_stime.tv_sec) * 1_000_000_000 + UInt64(usage.ru_stime.tv_usec) * 1_000
        return user + system
    }
}

/// A seeded generator so the injection phases are the same in every run.
struct BenchSplitMix: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
