// `perf-test-child hang-log <dir> <mode> [log] [label=<queue label>]`: a service with Perf
// installed (recording to <dir>) and, with `log`, `Configuration.logToStandardError` on; tests
// read its stderr.
//   hang:  a hang watchdog on a queue that blocks 600 ms once in `HangLogChild.loadStore()`; once
//          the hang is reported it shuts Perf down, prints "done" and exits.
//   merged: the same, blocked in `loadStoreMerged()`, whose body is `loadIndexMerged()`'s: an
//          optimised build merges the two into one `merged` function.
//   inlined-thunk: the same, blocked in `sleepInlined(milliseconds:)`, which an optimised build
//          inlines into the block's closure, and the closure into its `partial apply` forwarder:
//          no frame of the program but compiler glue is on the stack.
//   start: installs, shuts down, prints "done" (the start after `facade hang <dir>` was killed
//          recovers it).
import Foundation
import Glibc
import Perf

enum HangLogChild {
    static func run(_ arguments: [String]) -> Int32 {
        guard arguments.count >= 2, ["hang", "merged", "inlined-thunk", "start"].contains(arguments[1]) else {
            FileHandle.standardError.write(
                Data(
                    "usage: perf-test-child hang-log <dir> hang|merged|inlined-thunk|start [log] [label=<label>]\n"
                        .utf8))
            return 2
        }
        let label = arguments.first { $0.hasPrefix("label=") }.map { String($0.dropFirst(6)) } ?? "child.db.writer"
        Perf.install(
            Perf.Configuration(
                directory: URL(fileURLWithPath: arguments[0]), app: Perf.AppInfo(name: "hang-log-child", version: "1"),
                recording: .enabled, logToStandardError: arguments.contains("log") ? Perf.LogLines() : nil))
        if arguments[1] != "start" {
            let queue = DispatchQueue(label: label)
            let reported = DispatchSemaphore(value: 0)
            var configuration = Perf.HangWatchdog.Configuration()
            configuration.startupGrace = .zero
            configuration.onEpisode = { episode in if episode.kind == .hang { reported.signal() } }
            let watchdog = Perf.HangWatchdog(monitoring: .queue(queue), configuration: configuration)
            watchdog.start()
            if arguments[1] == "merged" {
                // The twin runs too, so that it is kept and merged in a build that strips what is
                // never called.
                loadIndexMerged(milliseconds: 0)
                queue.asyncAfter(deadline: .now() + .milliseconds(200)) { loadStoreMerged(milliseconds: 600) }
            } else if arguments[1] == "inlined-thunk" {
                // A duration known only at run time, captured: the closure has a context, so a
                // `partial apply` forwarder calls it, and the optimiser cannot fold the capture away.
                let milliseconds = arguments.contains("log") ? 600 : 601
                queue.asyncAfter(deadline: .now() + .milliseconds(200)) { sleepInlined(milliseconds: milliseconds) }
            } else {
                queue.asyncAfter(deadline: .now() + .milliseconds(200)) { loadStore(milliseconds: 600) }
            }
            reported.wait()
        }
        Perf.shutdown()
        acknowledge("done")
        return 0
    }

    /// The culprit the tests look for: one `clock_nanosleep` of the whole block.
    @inline(never)
    static func loadStore(milliseconds: Int) {
        var duration = timespec(tv_sec: milliseconds / 1_000, tv_nsec: (milliseconds % 1_000) * 1_000_000)
        var remaining = timespec()
        while nanosleep(&duration, &remaining) != 0 && errno == EINTR { duration = remaining }
    }

    /// A block like `loadStore(milliseconds:)`'s, in a body of its own (one `loadStore` shares
    /// would merge it too), with a twin of the same body.
    @inline(never)
    static func loadStoreMerged(milliseconds: Int) {
        var duration = timespec(tv_sec: milliseconds / 1_000, tv_nsec: (milliseconds % 1_000) * 1_000_000)
        var remaining = timespec()
        while clock_nanosleep(CLOCK_MONOTONIC, 0, &duration, &remaining) == EINTR { duration = remaining }
    }

    /// `loadStoreMerged(milliseconds:)`'s twin: an optimised build keeps one body for both.
    @inline(never)
    static func loadIndexMerged(milliseconds: Int) {
        var duration = timespec(tv_sec: milliseconds / 1_000, tv_nsec: (milliseconds % 1_000) * 1_000_000)
        var remaining = timespec()
        while clock_nanosleep(CLOCK_MONOTONIC, 0, &duration, &remaining) == EINTR { duration = remaining }
    }

    /// A block with no symbol of its own in an optimised build: always inlined, and private, so
    /// `-enable-testing` does not keep a copy of it for the tests to call. One call into
    /// Foundation, which sleeps the whole time (retrying when a signal cuts the sleep short): a
    /// body that small leaves the closure small enough to be inlined into its forwarder too, where
    /// a loop of its own kept the closure a function of its own.
    @inline(__always)
    private static func sleepInlined(milliseconds: Int) {
        Thread.sleep(forTimeInterval: Double(milliseconds) / 1_000)
    }

    /// Unbuffered, so the parent reads it while this process runs.
    private static func acknowledge(_ text: String) {
        let bytes = Array((text + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
    }
}
