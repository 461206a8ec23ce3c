// `perf-test-child systemd <dir> [limitMs=<ms>]`: a service under systemd's watchdog, for the
// test that stands in for systemd (it binds `$NOTIFY_SOCKET` and sets `$WATCHDOG_USEC`).
// Installs Perf on <dir>, calls `Perf.markReady()`, starts a hang watchdog on the queue
// `systemd.feed` linked to systemd's watchdog (hang limit `limitMs`, 800 ms by default; in
// progress journalled after 300 ms) and prints "ready". At stdin EOF it blocks the queue (in
// `waitForStuckFeed`, printing "blocked <CLOCK_MONOTONIC ns>") and waits to be killed.
import Dispatch
import Foundation
import Glibc
import Perf

enum SystemdChild {
    static func run(_ arguments: [String]) -> Int32 {
        guard let path = arguments.first else {
            FileHandle.standardError.write(Data("usage: perf-test-child systemd <dir> [limitMs=<ms>]\n".utf8))
            return 2
        }
        let limitMs = arguments.dropFirst().compactMap { $0.hasPrefix("limitMs=") ? Int($0.dropFirst(8)) : nil }.first
        Perf.install(
            Perf.Configuration(
                directory: URL(fileURLWithPath: path), app: Perf.AppInfo(name: "systemd-child", version: "1"),
                recording: .enabled))
        Perf.markReady()
        let queue = DispatchQueue(label: "systemd.feed")
        var configuration = Perf.HangWatchdog.Configuration()
        configuration.startupGrace = .zero
        configuration.ongoingAfter = .milliseconds(300)
        configuration.systemdWatchdog = .init(hangLimit: .milliseconds(limitMs ?? 800))
        let watchdog = Perf.HangWatchdog(monitoring: .queue(queue), configuration: configuration)
        watchdog.start()
        WatchdogCrashChild.emit("ready")
        // The queue serves pings until stdin closes, so the watchdog knows the thread serving it.
        while !FileHandle.standardInput.availableData.isEmpty {}
        queue.async { waitForStuckFeed() }
        while true { withExtendedLifetime(watchdog) { _ = Glibc.pause() } }
    }

    /// The culprit: blocked in one long `usleep`, as a service stuck on I/O is.
    @inline(never)
    static func waitForStuckFeed() {
        WatchdogCrashChild.emit("blocked \(DispatchTime.now().uptimeNanoseconds)")
        usleep(60_000_000)
    }
}
