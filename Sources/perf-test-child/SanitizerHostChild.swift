// `perf-test-child sanitizer-host DIRECTORY shutdown|exit`: a host as a user's sanitizer CI builds
// one (scripts/validate-sanitizers.sh builds this executable with --sanitize=address and
// --sanitize=thread). It installs Perf, ends spans under and over budget from two threads, notes,
// and blocks its watched queue into a hang; then shuts Perf down, or exits with it installed: the
// two ways a host's process ends. The script checks the ledger and that the sanitizer said nothing.
import Dispatch
import Foundation
import Glibc
import Perf

/// Sleeps in the watched queue's work item: the hang the watchdog must report, this its culprit.
@inline(never)
func blockTheWatchedQueue(milliseconds: UInt32) {
    usleep(milliseconds * 1_000)
}

enum SanitizerHostChild {
    static func run(_ arguments: [String]) -> Int32 {
        guard arguments.count == 2, ["shutdown", "exit"].contains(arguments[1]) else {
            print("usage: perf-test-child sanitizer-host DIRECTORY shutdown|exit")
            return 2
        }
        Perf.install(
            Perf.Configuration(
                directory: URL(fileURLWithPath: arguments[0]), app: .init(name: "sanitizer-host"),
                recording: .enabled))
        let queue = DispatchQueue(label: "sanitizer-host.work")
        let watchdog = Perf.HangWatchdog(monitoring: .queue(queue))
        watchdog.start()

        // Under budget from two threads at once, then over budget (each writes a ledger line).
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            for _ in 0..<5_000 {
                let span = Perf.begin("host.fast", slowMs: 1_000)
                span.end()
            }
        }
        for _ in 0..<20 {
            let span = Perf.begin("host.slow", slowMs: 1)
            usleep(2_000)
            span.end()
        }
        Perf.note("host.note")

        guard waitFor(seconds: 20, { watchdog.statistics.pingsSent >= 5 }) else {
            print("error: the watchdog sent no pings")
            return 1
        }
        queue.async { blockTheWatchedQueue(milliseconds: 600) }
        guard waitFor(seconds: 30, { watchdog.statistics.hangs >= 1 }) else {
            print("error: no hang was reported")
            return 1
        }
        print("hangs \(watchdog.statistics.hangs)")
        if arguments[1] == "shutdown" {
            watchdog.stop()
            Perf.shutdown()
        }
        print("done \(arguments[1])")
        return 0
    }

    /// Polls `condition` every 10 ms until it holds or `seconds` pass (a host program's wait,
    /// not a test's synchronisation).
    static func waitFor(seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > deadline { return false }
            usleep(10_000)
        }
        return true
    }
}
