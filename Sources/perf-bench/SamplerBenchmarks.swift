// The span sampler's costs: one tick that samples one over-budget span (a blocked thread read
// from /proc, a running one through SIGPROF), each beside the watchdog's own stack read in the
// same run, and the sampler thread's CPU while nothing is over budget.
import CPerfShims
import Foundation
import Glibc
import Perf
import PerfCore
import Synchronization

enum SamplerBenchmarks {
    static let group = BenchGroup(name: "sampler") { context in
        oneSample(context, blocked: true)
        oneSample(context, blocked: false)
        idleCPU(context)
    }

    /// A thread that holds one open span, long past its 1 ns budget, on its sampled-span stack,
    /// and blocks in `usleep` or spins until told to stop.
    private final class Holder: @unchecked Sendable {
        let stop = Atomic<Bool>(false)
        let ready = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)

        init(blocked: Bool) {
            Thread { [self] in
                perf_sampled_push(1, 2, 0)
                ready.signal()
                while !stop.load(ordering: .relaxed) {
                    if blocked { usleep(200_000) } else { Self.spin() }
                }
                _ = perf_sampled_pop()
                finished.signal()
            }.start()
            ready.wait()
        }

        @inline(never)
        static func spin() {
            var sum: UInt64 = 0
            for index in 0..<100_000 { sum &+= UInt64(index) &* 31 }
            Bench.blackHole(Int(truncatingIfNeeded: sum))
        }

        func end() {
            stop.store(true, ordering: .relaxed)
            finished.wait()
        }
    }

    /// One sampler tick with one over-budget span on one thread: read the stacks, sample the
    /// thread, symbolicate, fold, rewrite the span's slot.
    private static func oneSample(_ context: BenchContext, blocked: Bool) {
        let count = context.scaled(400, quick: 100)
        guard let slots = ProfileSlots.make(directory: nil, clock: SystemClock()) else { return }
        let sampler = SpanSampler(slots: slots, intervalMs: 10, maxSamples: Int.max / 2)
        sampler.start(thread: false)
        let holder = Holder(blocked: blocked)
        // The first ticks load the images' symbol tables; not counted.
        for _ in 0..<5 { sampler.tick() }
        var times: [Double] = []
        for _ in 0..<count {
            let start = Bench.now()
            sampler.tick()
            times.append(Double(Bench.now() - start))
        }
        holder.end()
        sampler.stop()
        var baselineTimes: [Double] = []
        let other = Holder(blocked: true)
        var views = [perf_sampled_view](repeating: perf_sampled_view(), count: 256)
        for _ in 0..<count {
            let start = Bench.now()
            let read = views.withUnsafeMutableBufferPointer { perf_sampled_snapshot($0.baseAddress, Int32($0.count)) }
            Bench.blackHole(Int(read))
            baselineTimes.append(Double(Bench.now() - start))
        }
        other.end()
        let distribution = Distribution(times)
        let baseline = Distribution(baselineTimes)
        let target = blocked ? 100_000.0 : 50_000.0
        context.add(
            BenchRow(
                group: "sampler", name: "one sample of an over-budget span, \(blocked ? "blocked" : "running") thread",
                unit: "ns", median: distribution.median, p99: distribution.p99, p999: nil,
                baseline: "reading every thread's span stack alone", baselineMedian: baseline.median,
                baselineP99: baseline.p99, ratio: nil, target: "≤ \(Int(target / 1000)) µs median",
                pass: distribution.median <= target, allocationsPerOp: nil,
                note: blocked
                    ? "a thread in usleep: /proc syscall line, remote unwind, wait description, fold, slot rewrite; "
                        + "no signal"
                    : "a spinning thread: two /proc looks, its CPU clock twice, SIGPROF and the handler's backtrace, "
                        + "fold, slot rewrite"))
    }

    /// The sampler thread's CPU over an idle period, with 8 threads inside measured spans that
    /// are under budget (their stacks are read at every tick), as a share of one core.
    private static func idleCPU(_ context: BenchContext) {
        let seconds = context.quick ? 2.0 : 6.0
        guard let slots = ProfileSlots.make(directory: nil, clock: SystemClock()) else { return }
        let sampler = SpanSampler(slots: slots, intervalMs: 10, maxSamples: 200)
        let stop = Atomic<Bool>(false)
        let group = DispatchGroup()
        for _ in 0..<8 {
            group.enter()
            Thread {
                // Open for the whole period, its budget an hour away.
                perf_sampled_push(perf_fast_ns(), 3_600_000_000_000, 0)
                while !stop.load(ordering: .relaxed) { usleep(50_000) }
                _ = perf_sampled_pop()
                group.leave()
            }.start()
        }
        // One tick's own time with nothing over budget, apart from the thread's sleeps and wakes.
        sampler.start(thread: false)
        var tickTimes: [Double] = []
        for _ in 0..<200 {
            let start = Bench.now()
            sampler.tick()
            tickTimes.append(Double(Bench.now() - start))
        }
        sampler.stop()
        let tick = Distribution(tickTimes)
        let wallBefore = Bench.now()
        sampler.start()
        Thread.sleep(forTimeInterval: seconds)
        let ticks = sampler.ticks
        let cpu = sampler.threadCPUNanos
        sampler.stop()
        let wall = Double(Bench.now() - wallBefore)
        stop.store(true, ordering: .relaxed)
        group.wait()
        let percent = Double(cpu) / wall * 100
        context.add(
            BenchRow(
                group: "sampler", name: "sampler thread CPU, nothing over budget @10 ms", unit: "% core",
                median: percent, p99: nil, p999: nil, baseline: nil, baselineMedian: nil, baselineP99: nil, ratio: nil,
                target: "≤ 0.1 % of a core", pass: percent <= 0.1, allocationsPerOp: nil,
                note: String(
                    format: "%llu ticks in %.1f s, 8 threads inside under-budget measured spans; one tick alone: "
                        + "median %.0f ns, p99 %.0f ns", ticks, wall / 1e9, tick.median, tick.p99)
            ))
    }
}
