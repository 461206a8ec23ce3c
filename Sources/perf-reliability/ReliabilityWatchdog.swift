// Watchdog false positives: a child whose queue is kept busy (`perf-test-child watchdog`) is SIGSTOPped
// and CPU-starved by spinners; no hang may be blamed on its queue.
import Foundation
import Glibc
import PerfTestSupport

enum ReliabilityWatchdog {
    static func falsePositives(stops: Int, stopSeconds: Double, starveSeconds: Double) throws -> ScenarioResult {
        let child = try ChildProcess(
            executable: testChild, arguments: ["watchdog"], withStandardInput: true)
        guard child.readLines(until: { $0 == "ready" }, timeoutSeconds: 30) != nil else {
            throw ChildProcess.Failure(description: "the watchdog child never became ready")
        }
        // The stops and the starvation are the scenario itself, not synchronisation: the
        // watchdog must see real wall-clock time pass while it cannot run.
        let stop = timespec(
            tv_sec: Int(stopSeconds), tv_nsec: Int(stopSeconds.truncatingRemainder(dividingBy: 1) * 1e9))
        for _ in 0..<stops {
            var between = timespec(tv_sec: 0, tv_nsec: 500_000_000)
            nanosleep(&between, nil)
            child.send(SIGSTOP)
            var held = stop
            nanosleep(&held, nil)
            child.send(SIGCONT)
        }
        let spinners = max(2, 2 * Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        starve(threads: spinners, seconds: starveSeconds)
        child.closeStandardInput()
        guard let lines = child.readLines(until: { $0 == "done" }, timeoutSeconds: 60) else {
            throw ChildProcess.Failure(description: "the watchdog child did not finish")
        }
        let status = child.wait()
        let episodes = lines.filter { $0.hasPrefix("episode") }
        let falseHangs = episodes.filter { $0.contains("kind=hang suppressed=none") }
        let stopped = episodes.filter { $0.contains("suppressed=stopped") }.count
        let hitches = episodes.filter { $0.contains("kind=hitch suppressed=none") }.count
        return ScenarioResult(
            scenario: "Watchdog false positives",
            done: "`perf-test-child watchdog` (queue loaded with 2 ms items): \(stops) SIGSTOPs of \(stopSeconds) s, "
                + "then \(spinners) spinner threads for \(starveSeconds) s",
            target: "0 false hangs",
            result: "\(falseHangs.count) hangs blamed on the queue; \(stopped) episodes suppressed as `stopped`",
            pass: falseHangs.isEmpty && ChildProcess.exitedNormally(status),
            notes: "unsuppressed hitches (120–250 ms, not hangs) during starvation: \(hitches)"
                + (falseHangs.isEmpty ? "" : "; first false hang: \(falseHangs[0])"),
            counts: [
                "stops": Double(stops), "falseHangs": Double(falseHangs.count), "suppressedStopped": Double(stopped),
                "hitches": Double(hitches), "spinners": Double(spinners),
            ])
    }

    /// Busy threads at normal priority for `seconds`, competing with the child for every core.
    private static func starve(threads: Int, seconds: Double) {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        let spins = Stress.concurrently(threads: threads) { _ -> UInt64 in
            var spins: UInt64 = 0
            while DispatchTime.now().uptimeNanoseconds < deadline { spins &+= 1 }
            return spins
        }
        Stress.blackHole(spins)
    }
}
