// Installs Perf, ends spans under and over budget from two threads, blocks its watched queue past
// the hang threshold, then shuts down (`shutdown`) or exits with Perf still installed (`exit`):
// the two ways a host's process ends. Prints what it did; the script checks the ledger.
import Dispatch
import Foundation
import Glibc
import Perf

/// Sleeps in the queue's work item: the hang the watchdog must report, with this as its culprit.
@inline(never)
func blockTheWatchedQueue(milliseconds: UInt32) {
    usleep(milliseconds * 1_000)
}

func waitFor(seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > deadline { return false }
        usleep(10_000)
    }
    return true
}

let arguments = CommandLine.arguments
guard arguments.count == 3, ["shutdown", "exit"].contains(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: sanitizer-host DATA_DIRECTORY shutdown|exit\n".utf8))
    exit(2)
}
Perf.install(
    Perf.Configuration(
        directory: URL(fileURLWithPath: arguments[1]), app: .init(name: "sanitizer-host"), recording: .enabled))

let queue = DispatchQueue(label: "sanitizer-host.work")
let watchdog = Perf.HangWatchdog(monitoring: .queue(queue))
watchdog.start()

// Under budget from two threads at once, then over budget (each of those writes a ledger line).
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

guard waitFor(seconds: 10, { watchdog.statistics.pingsSent >= 5 }) else {
    print("error: the watchdog sent no pings")
    exit(1)
}
queue.async { blockTheWatchedQueue(milliseconds: 600) }
guard waitFor(seconds: 20, { watchdog.statistics.hangs >= 1 }) else {
    print("error: no hang was reported")
    exit(1)
}
print("hangs \(watchdog.statistics.hangs)")
if arguments[2] == "shutdown" {
    watchdog.stop()
    Perf.shutdown()
}
print("done \(arguments[2])")
