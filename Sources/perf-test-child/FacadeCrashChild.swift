// `perf-test-child facade <mode> <dir>`: programs that use Perf exactly as a service would, for
// tests that SIGKILL them.
//   spans: ends over-budget spans in a loop, acknowledging each on stdout after `end()` returned.
//   open:  opens a bounded keyed span, prints "ready", and blocks until killed.
//   sampled: a measured span blocks in a pipe read, past its 20 ms budget, with a child span
//          open inside it; prints "ready" and waits to be killed (the test kills it once the
//          span's profile holds samples).
//   hang:  runs a hang watchdog on a queue, blocks that queue in `FacadeCrashChild.parseHugeFeed`,
//          prints "fatal" once the hang has been journalled as in progress, and waits to be killed.
import Foundation
import Glibc
import Perf

enum FacadeCrashChild {
    static func run(_ arguments: [String]) -> Int32 {
        guard arguments.count == 2, ["spans", "open", "hang", "sampled"].contains(arguments[0]) else {
            FileHandle.standardError.write(Data("usage: perf-test-child facade spans|open|hang|sampled <dir>\n".utf8))
            return 2
        }
        Perf.install(
            Perf.Configuration(
                directory: URL(fileURLWithPath: arguments[1]), app: Perf.AppInfo(name: "crash-child", version: "1"),
                recording: .enabled, ledgerCapBytes: 64 << 20))
        if arguments[0] == "hang" { hangUntilKilled() }
        if arguments[0] == "sampled" {
            let request = Thread {
                Perf.measure("stuck.request", slowMs: 20) {
                    Perf.measure("db.wait", slowMs: 600_000) { waitForAnswer() }
                }
            }
            request.start()
            acknowledge("ready\n")
            while true { pause() }
        }
        if arguments[0] == "open" {
            Perf.begin(key: "upload-1", "child.upload", slowMs: 60_000, lifetime: .bounded(ms: 600_000))
            acknowledge("ready\n")
            while true { pause() }
        }
        // Bounded so a test that forgets to kill the child does not leave it running forever.
        for sequence in 0..<1_000_000 {
            let span = Perf.begin("crash.span", slowMs: 0)
            span.end(detail: "https://example.com/v1/items?token=secret", count: sequence)
            guard acknowledge("ack \(sequence)\n") else { return 1 }
        }
        Perf.shutdown()
        return 0
    }

    /// The watchdog journals the hang as in progress at 1 s; `fatalAfter` fires later, so by the
    /// time "fatal" is printed the marker is in the journal.
    private static func hangUntilKilled() -> Never {
        let queue = DispatchQueue(label: "child.feed")
        var configuration = Perf.HangWatchdog.Configuration()
        configuration.startupGrace = .zero
        configuration.fatalAfter = .milliseconds(1_500)
        configuration.onFatal = { _ in acknowledge("fatal\n") }
        let watchdog = Perf.HangWatchdog(monitoring: .queue(queue), configuration: configuration)
        watchdog.start()
        queue.asyncAfter(deadline: .now() + .milliseconds(200)) { parseHugeFeed() }
        while true { pause() }
    }

    /// A read that never returns: the pipe's write end stays open and silent.
    @inline(never)
    static func waitForAnswer() {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return }
        var byte: UInt8 = 0
        _ = read(ends[0], &byte, 1)
    }

    /// The culprit the crash test looks for in the fatal hang's stuck frames.
    @inline(never)
    static func parseHugeFeed() {
        let deadline = DispatchTime.now().uptimeNanoseconds + 60_000_000_000
        while DispatchTime.now().uptimeNanoseconds < deadline {
            var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
            nanosleep(&pause, nil)
        }
    }

    /// Unbuffered: an acknowledgement the parent reads is never ahead of the file.
    @discardableResult
    private static func acknowledge(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) } == bytes.count
    }
}
