// Real-time tests of the hang watchdog: real threads, a real serial queue, injected blocks.
// They assert tolerances, never timings.
import Dispatch
import Foundation
import Synchronization
import Testing

@testable import Perf

/// Collects episodes delivered on the watchdog's thread.
final class EpisodeCollector: Sendable {
    private let episodes = Mutex<[Perf.HangWatchdog.Episode]>([])

    func append(_ episode: Perf.HangWatchdog.Episode) { episodes.withLock { $0.append(episode) } }

    var all: [Perf.HangWatchdog.Episode] { episodes.withLock { $0 } }
}

/// Polls `condition` until it holds or `seconds` pass; false on timeout.
func waitUntil(seconds: Double, _ condition: () -> Bool) async throws -> Bool {
    let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
    while !condition() {
        if DispatchTime.now().uptimeNanoseconds > deadline { return false }
        try await Task.sleep(nanoseconds: 5_000_000)
    }
    return true
}

/// The function the tests expect to find in the stuck frames.
@inline(never)
func watchdogTestBlockForMilliseconds(_ milliseconds: Int) -> (start: UInt64, end: UInt64) {
    let start = DispatchTime.now().uptimeNanoseconds
    let deadline = start + UInt64(milliseconds) * 1_000_000
    // nanosleep in a loop: SIGPROF from the sampler interrupts it early.
    while DispatchTime.now().uptimeNanoseconds < deadline {
        var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
        nanosleep(&pause, nil)
    }
    return (start, DispatchTime.now().uptimeNanoseconds)
}

@Suite(.serialized) struct WatchdogRealTimeTests {
    private func makeWatchdog(
        _ queue: DispatchQueue, _ collector: EpisodeCollector
    ) -> Perf.HangWatchdog {
        var configuration = Perf.HangWatchdog.Configuration()
        configuration.startupGrace = .zero
        configuration.onEpisode = { collector.append($0) }
        return Perf.HangWatchdog(monitoring: .queue(queue), configuration: configuration)
    }

    @Test(arguments: [300, 1_000])
    func injectedBlockIsExactlyOneHangWithBoundsAndTheStuckFunction(milliseconds: Int) async throws {
        let queue = DispatchQueue(label: "watchdog-test-\(milliseconds)")
        let collector = EpisodeCollector()
        let watchdog = makeWatchdog(queue, collector)
        watchdog.start()
        defer { watchdog.stop() }
        // Let a few pings through so the watchdog knows which threads serve the queue.
        #expect(try await waitUntil(seconds: 5) { watchdog.statistics.pingsSent >= 6 })
        let measured = Mutex<(start: UInt64, end: UInt64)?>(nil)
        queue.async {
            let span = watchdogTestBlockForMilliseconds(milliseconds)
            measured.withLock { $0 = span }
        }
        #expect(try await waitUntil(seconds: 10) { !collector.all.isEmpty })
        // A few more pings: a second episode (backlog split in two) would show up here.
        let pings = watchdog.statistics.pingsSent
        #expect(try await waitUntil(seconds: 5) { watchdog.statistics.pingsSent >= pings + 4 })
        watchdog.stop()
        let episodes = collector.all
        #expect(episodes.count == 1, "\(episodes)")
        let episode = try #require(episodes.first)
        let span = try #require(measured.withLock { $0 })
        let actualMs = Double(span.end - span.start) / 1e6
        #expect(episode.kind == .hang)
        #expect(episode.suppressed == nil)
        #expect(episode.lowerMs <= actualMs + 5, "lower \(episode.lowerMs) actual \(actualMs)")
        #expect(episode.upperMs >= actualMs - 5, "upper \(episode.upperMs) actual \(actualMs)")
        #expect(abs(episode.lowerMs - actualMs) <= 60 && abs(episode.upperMs - actualMs) <= 60)
        #expect(episode.samplesTaken >= 1)
        let stuck = episode.stuckFrames.compactMap(\.symbol)
        #expect(stuck.contains { $0.contains("watchdogTestBlockForMilliseconds") }, "\(episode.stuckFrames)")
        #expect(episode.culprit?.symbol?.contains("watchdogTestBlockForMilliseconds") == true)
        #expect(episode.stackQuality == .full)
        #expect(episode.thread?.tid != nil)
    }

    @Test func idleQueueReportsNothing() async throws {
        let queue = DispatchQueue(label: "watchdog-test-idle")
        let collector = EpisodeCollector()
        let watchdog = makeWatchdog(queue, collector)
        watchdog.start()
        // 40 pings at 50 ms: two seconds of an idle queue.
        #expect(try await waitUntil(seconds: 10) { watchdog.statistics.pingsSent >= 40 })
        watchdog.stop()
        #expect(collector.all.isEmpty, "\(collector.all)")
        let statistics = watchdog.statistics
        #expect(statistics.cpuNanos > 0)
        #expect(!watchdog.isRunning)
    }

    @Test func stopJoinsTheThreadAndNothingTicksAfterwards() async throws {
        let collector = EpisodeCollector()
        let watchdog = makeWatchdog(DispatchQueue(label: "watchdog-test-stop"), collector)
        watchdog.start()
        #expect(try await waitUntil(seconds: 5) { watchdog.statistics.ticks >= 2 })
        watchdog.stop()
        let ticks = watchdog.statistics.ticks
        // Another watchdog running for a few ticks gives the stopped one every chance to tick.
        let other = makeWatchdog(DispatchQueue(label: "watchdog-test-other"), collector)
        other.start()
        #expect(try await waitUntil(seconds: 5) { other.statistics.ticks >= 3 })
        other.stop()
        #expect(watchdog.statistics.ticks == ticks)
    }

    @Test func sigstopOfALoadedChildReportsNoHang() async throws {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("perf-bench")
        let child = Process()
        child.executableURL = executable
        child.arguments = ["child", "watchdog"]
        let input = Pipe()
        let output = Pipe()
        child.standardInput = input
        child.standardOutput = output
        try child.run()
        var text = ""
        while !text.contains("ready\n") {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        #expect(text.contains("ready"))
        // Holding the stop for 2 s is the scenario itself, not synchronisation.
        usleep(300_000)
        kill(child.processIdentifier, SIGSTOP)
        usleep(2_000_000)
        kill(child.processIdentifier, SIGCONT)
        usleep(700_000)
        try input.fileHandleForWriting.close()
        text += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        child.waitUntilExit()
        let episodes = text.split(separator: "\n").filter { $0.hasPrefix("episode") }
        #expect(text.contains("done"), "\(text)")
        #expect(episodes.filter { $0.contains("suppressed=none") }.isEmpty, "\(episodes)")
        #expect(episodes.contains { $0.contains("suppressed=stopped") }, "\(episodes)")
    }
}
