// `perf-test-child watchdog [block=<ms>]`: a process whose serial queue is kept busy with 2 ms
// items while a hang watchdog monitors it; `block=` injects one block 0.5 s after start. Tests
// SIGSTOP it (no hang may be reported) or SIGKILL it during the block; `foreign-sigprof` installs
// another SIGPROF handler first; `main` monitors the main queue (run by `dispatchMain()`) instead.
// It prints `ready`, then one line per episode, and on stdin EOF stops the watchdog and prints
// `done`.
import Foundation
import Perf

/// The stand-in profiler's SIGPROF handler.
private let foreignHandler: @convention(c) (Int32) -> Void = { _ in }
nonisolated(unsafe) private var foreignHandlerAddress: UInt = 0

enum WatchdogCrashChild {
    static func run(_ arguments: [String]) -> Int32 {
        let blockMs = arguments.compactMap { $0.hasPrefix("block=") ? Int($0.dropFirst(6)) : nil }.first
        if arguments.contains("foreign-sigprof") {
            // Stands in for a profiler that owns SIGPROF: the watchdog must leave it alone.
            signal(SIGPROF, foreignHandler)
            foreignHandlerAddress = unsafeBitCast(foreignHandler, to: UInt.self)
        }
        let onMain = arguments.contains("main")
        let queue = onMain ? DispatchQueue.main : DispatchQueue(label: "perf-test-child.watchdog")
        var configuration = Perf.HangWatchdog.Configuration()
        configuration.startupGrace = .zero
        configuration.onEpisode = { episode in emit(describe(episode)) }
        let watchdog = Perf.HangWatchdog(monitoring: onMain ? .main : .queue(queue), configuration: configuration)
        keepBusy(queue)
        watchdog.start()
        if let blockMs { queue.asyncAfter(deadline: .now() + 0.5) { blockInjected(milliseconds: blockMs) } }
        emit("ready")
        guard onMain else {
            waitForEndOfInput(then: watchdog)
            return 0
        }
        Thread { waitForEndOfInput(then: watchdog) }.start()
        dispatchMain()
    }

    private static func waitForEndOfInput(then watchdog: Perf.HangWatchdog) {
        while !FileHandle.standardInput.availableData.isEmpty {}
        watchdog.stop()
        // Whether SIGPROF still has the handler this process installed first (a profiler's).
        var action = sigaction()
        sigaction(SIGPROF, nil, &action)
        let ours = unsafeBitCast(action.__sigaction_handler.sa_handler, to: UInt.self)
        emit("sigprof-handler=\(String(ours, radix: 16)) foreign=\(String(foreignHandlerAddress, radix: 16))")
        emit("done")
        exit(0)
    }

    /// One line per episode: `episode kind=hang suppressed=none lowerMs=… quality=… culprit=…`.
    static func describe(_ episode: Perf.HangWatchdog.Episode) -> String {
        let culprit = episode.culprit?.symbol ?? "-"
        let thread = episode.thread.map { "\($0.tid)/\($0.state ?? "-")/\($0.waitChannel ?? "-")" } ?? "-"
        let quality: String
        switch episode.stackQuality {
        case .full: quality = "full"
        case .partial(let reason): quality = "partial(\(reason))"
        case .unavailable(let reason): quality = "unavailable(\(reason))"
        }
        return String(
            format:
                "episode kind=%@ suppressed=%@ lowerMs=%.1f upperMs=%.1f stallMs=%.1f samples=%d thread=%@ quality=%@ culprit=%@ stuck=%@",
            episode.kind.rawValue, episode.suppressed?.rawValue ?? "none", episode.lowerMs, episode.upperMs,
            episode.stallMs, episode.samplesTaken, thread, quality, culprit,
            episode.stack.prefix(6).map { $0.symbol ?? "?" }.joined(separator: " | "))
    }

    /// Writes a line unbuffered: the parent reads it while this process runs (or after a kill).
    static func emit(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// A loaded queue: 2 ms items back to back, forever.
    private static func keepBusy(_ queue: DispatchQueue) {
        queue.async {
            blockInjected(milliseconds: 2)
            keepBusy(queue)
        }
    }

    @inline(never)
    static func blockInjected(milliseconds: Int) {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(milliseconds) * 1_000_000
        while DispatchTime.now().uptimeNanoseconds < deadline {
            var pause = timespec(tv_sec: 0, tv_nsec: 500_000)
            nanosleep(&pause, nil)
        }
    }
}
