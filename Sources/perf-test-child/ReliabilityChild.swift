// `perf-test-child reliability <mode> …`: the programs the reliability scenarios disturb. They
// use Perf only through its public facade, as a service would.
//   writer <dir> [cap=<bytes>] [fsize=<bytes>] [lines=<n>] [pauseMs=<ms>] [acks=0]
//       ends over-budget spans (`count` = sequence) and prints "ack <n>" after each `end()`
//       returned (not with `acks=0`), after a first line "session <id>"; stops after <n> lines or
//       at stdin EOF, then shuts Perf down and prints "done".
//       `fsize=` sets RLIMIT_FSIZE (what `ulimit -f` sets) on itself before installing, with
//       SIGXFSZ at its default action and unblocked.
//   crash-story <dir>
//       opens a bounded keyed span, blocks a watched queue (in `FacadeCrashChild.parseHugeFeed`)
//       until the hang is journalled as in progress and then fatal, prints "fatal" and waits to be
//       killed.
import Dispatch
import Foundation
import Glibc
import Perf
import Synchronization

enum ReliabilityChild {
    static func run(_ arguments: [String]) -> Int32 {
        guard arguments.count >= 2 else { return usage() }
        let directory = URL(fileURLWithPath: arguments[1])
        let options = Dictionary(
            arguments.dropFirst(2).compactMap { option -> (String, Int)? in
                let parts = option.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, let value = Int(parts[1]) else { return nil }
                return (String(parts[0]), value)
            }, uniquingKeysWith: { $1 })
        switch arguments[0] {
        case "writer": return writer(directory: directory, options: options)
        case "crash-story": crashStory(directory: directory)
        default: return usage()
        }
    }

    private static func usage() -> Int32 {
        FileHandle.standardError.write(
            Data(
                ("usage: perf-test-child reliability writer <dir> [cap=<bytes>] [fsize=<bytes>] [lines=<n>] "
                    + "[pauseMs=<ms>]\n       perf-test-child reliability crash-story <dir>\n").utf8))
        return 2
    }

    private static let stopRequested = Atomic<Bool>(false)

    private static func writer(directory: URL, options: [String: Int]) -> Int32 {
        if let limit = options["fsize"] {
            // Start as a service would, with SIGXFSZ at its default action and unblocked: an
            // ignore or a mask inherited from the parent (both survive exec; test runners spawn
            // from threads that block signals) would hide the fault under test.
            signal(SIGXFSZ, SIG_DFL)
            var xfsz = sigset_t()
            sigemptyset(&xfsz)
            sigaddset(&xfsz, SIGXFSZ)
            pthread_sigmask(SIG_UNBLOCK, &xfsz, nil)
            let resource = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
            var fsize = rlimit()
            getrlimit(resource, &fsize)
            fsize.rlim_cur = min(rlim_t(limit), fsize.rlim_max)
            guard setrlimit(resource, &fsize) == 0 else { return 1 }
        }
        Perf.install(
            Perf.Configuration(
                directory: directory, app: Perf.AppInfo(name: "reliability-writer", version: "1"),
                recording: .enabled, ledgerCapBytes: options["cap"] ?? 64 << 20))
        let lines = options["lines"] ?? Int.max
        if lines == Int.max {
            Thread {
                while !FileHandle.standardInput.availableData.isEmpty {}
                stopRequested.store(true, ordering: .releasing)
            }.start()
        }
        var pause = timespec(tv_sec: 0, tv_nsec: (options["pauseMs"] ?? 0) * 1_000_000)
        var sequence = 0
        let acks = options["acks"] != 0
        WatchdogCrashChild.emit("session \(Perf.sessionID ?? "-")")
        while sequence < lines, !stopRequested.load(ordering: .acquiring) {
            let span = Perf.begin("reliability.write", slowMs: 0)
            span.end(detail: "/v1/items", count: sequence)
            // Unbuffered: an acknowledgement the parent reads is never ahead of the file.
            if acks { WatchdogCrashChild.emit("ack \(sequence)") }
            sequence += 1
            if pause.tv_nsec > 0 { nanosleep(&pause, nil) }
        }
        Perf.shutdown()
        WatchdogCrashChild.emit("done")
        return 0
    }

    private static func crashStory(directory: URL) -> Never {
        Perf.install(
            Perf.Configuration(
                directory: directory, app: Perf.AppInfo(name: "crash-story", version: "1"), recording: .enabled))
        Perf.begin(key: "upload-1", "story.upload", slowMs: 60_000, lifetime: .bounded(ms: 600_000))
        let queue = DispatchQueue(label: "story.feed")
        var configuration = Perf.HangWatchdog.Configuration()
        configuration.startupGrace = .zero
        // In-progress hangs are journalled at `ongoingAfter`; `fatalAfter` fires on a later tick, so
        // "fatal" on stdout means the marker a kill must not lose is already in the journal.
        configuration.ongoingAfter = .milliseconds(300)
        configuration.fatalAfter = .milliseconds(500)
        configuration.onFatal = { _ in WatchdogCrashChild.emit("fatal") }
        let watchdog = Perf.HangWatchdog(monitoring: .queue(queue), configuration: configuration)
        watchdog.start()
        // After a few served pings, so the watchdog knows which thread serves the queue: blocked
        // from the first ping, it would sample the main thread and name the wrong culprit.
        queue.asyncAfter(deadline: .now() + .milliseconds(200)) { waitForHugeFeed() }
        while true { withExtendedLifetime(watchdog) { _ = Glibc.pause() } }
    }

    /// The crash story's culprit: blocked in one long `usleep`, as a service waiting on I/O is,
    /// not spinning. Prints `blocked <CLOCK_MONOTONIC ns>` first, so the parent knows how long
    /// the hang had really lasted when it kills the process.
    @inline(never)
    static func waitForHugeFeed() {
        WatchdogCrashChild.emit("blocked \(DispatchTime.now().uptimeNanoseconds)")
        usleep(60_000_000)
    }
}
