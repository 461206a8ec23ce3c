// Real-time tests of the hang watchdog: real threads, a real serial queue, injected blocks.
// They assert tolerances, never timings.
import Dispatch
import Foundation
import PerfTestSupport
import Synchronization
import Testing

@testable import Perf

/// Collects episodes delivered on the watchdog's thread.
final class EpisodeCollector: Sendable {
    private let episodes = Mutex<[Perf.HangWatchdog.Episode]>([])

    func append(_ episode: Perf.HangWatchdog.Episode) { episodes.withLock { $0.append(episode) } }

    var all: [Perf.HangWatchdog.Episode] { episodes.withLock { $0 } }
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

/// Blocks the calling thread in short sleeps (a real wait, not a spin) until `done()` holds or
/// `limitMs` has passed: a block that lasts until what the test waits for has happened, however
/// slowly a loaded machine gets there. Never inlined: the test looks for it in the stack, and a
/// release build inlined it into the queue's closure.
@inline(never)
func watchdogTestBlockUntil(limitMs: Int, _ done: () -> Bool) {
    let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(limitMs) * 1_000_000
    while !done(), DispatchTime.now().uptimeNanoseconds < deadline {
        var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
        nanosleep(&pause, nil)
    }
}

/// Nested in the serialized global-state suite: these tests install the process-wide hang
/// handler, which `Perf.install`/`shutdown` in the facade suites also set and clear.
extension PerfGlobalStateTests {
    @Suite struct WatchdogRealTimeTests {
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
            #expect(try await waitUntil(seconds: 10) { collector.all.contains { $0.kind == .hang } })
            // A few more pings: a second episode (backlog split in two) would show up here.
            let pings = watchdog.statistics.pingsSent
            #expect(try await waitUntil(seconds: 5) { watchdog.statistics.pingsSent >= pings + 4 })
            watchdog.stop()
            // Hangs only: on a shared 2-core host the scheduler alone can cause a real hitch.
            let episodes = collector.all.filter { $0.kind == .hang }
            #expect(episodes.count == 1, "\(collector.all)")
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
            let lines = try WatchdogChild.run(
                ["watchdog"],
                scenario: { pid in
                    // Holding the stop for 2 s is the scenario itself, not synchronisation.
                    usleep(300_000)
                    kill(pid, SIGSTOP)
                    usleep(2_000_000)
                    kill(pid, SIGCONT)
                },
                until: "suppressed=stopped")
            let episodes = lines.filter { $0.hasPrefix("episode") }
            #expect(lines.contains("done"), "\(lines)")
            // No hang blamed on the queue (a real scheduler hitch on a shared host is not the point).
            #expect(episodes.filter { $0.contains("kind=hang suppressed=none") }.isEmpty, "\(episodes)")
            #expect(episodes.contains { $0.contains("suppressed=stopped") }, "\(episodes)")
        }

        @Test func foreignSigprofHandlerIsLeftAloneAndBlockedThreadsAreStillRead() async throws {
            let lines = try WatchdogChild.run(
                ["watchdog", "foreign-sigprof", "block=400"], until: "episode kind=hang")
            let episodes = lines.filter { $0.hasPrefix("episode kind=hang") }
            #expect(episodes.count == 1, "\(lines)")
            // The profiler's handler stays; the blocked thread's stack needs no signal, so the
            // culprit is still named (a sample that caught it running is the only one lost).
            let handler = try #require(lines.first { $0.hasPrefix("sigprof-handler=") })
            let fields = handler.split(separator: " ").map { $0.split(separator: "=").last.map(String.init) ?? "" }
            #expect(fields.count == 2 && fields[0] == fields[1] && fields[0] != "0", "\(handler)")
            #expect(episodes.first?.contains("WatchdogCrashChild.blockInjected") == true, "\(episodes)")
        }

        @Test func mainQueueAfterDispatchMainIsSampledOnTheThreadThatServesIt() async throws {
            // dispatchMain() exits the main thread; a worker drains the main queue. The watchdog must
            // sample that worker, not the main thread's tid.
            let lines = try WatchdogChild.run(["watchdog", "main", "block=400"], until: "episode kind=hang")
            let episodes = lines.filter { $0.hasPrefix("episode kind=hang") }
            #expect(episodes.count == 1, "\(lines)")
            let episode = try #require(episodes.first)
            #expect(episode.contains("kind=hang") && episode.contains("quality=full"), "\(episode)")
            // Release builds may name a specialisation: "function signature specialization … of static …".
            #expect(episode.contains("perf_test_child.WatchdogCrashChild.blockInjected"), "\(episode)")
            // Sleeping in nanosleep, or running its loop check at the instant of the sample.
            #expect(episode.contains("/S/") || episode.contains("/R/"), "\(episode)")
        }

        @Test func mainActorTargetIsPingedAndABlockedMainActorIsAHang() async throws {
            let collector = EpisodeCollector()
            var configuration = Perf.HangWatchdog.Configuration()
            configuration.startupGrace = .zero
            configuration.onEpisode = { collector.append($0) }
            let watchdog = Perf.HangWatchdog(monitoring: .mainActor, configuration: configuration)
            watchdog.start()
            defer { watchdog.stop() }
            // At most one ping is outstanding, so six pings sent means five were served.
            #expect(try await waitUntil(seconds: 5) { watchdog.statistics.pingsSent >= 6 })
            await MainActor.run { _ = watchdogTestBlockForMilliseconds(400) }
            #expect(try await waitUntil(seconds: 5) { collector.all.contains { $0.kind == .hang } })
            watchdog.stop()
            let hang = try #require(collector.all.first { $0.kind == .hang })
            #expect(hang.targetName == "MainActor")
            #expect(hang.lowerMs <= 405 && hang.upperMs >= 395)
        }

        @Test func cooperativePoolTargetIsPingedAndQuietWhenIdle() async throws {
            let collector = EpisodeCollector()
            var configuration = Perf.HangWatchdog.Configuration()
            configuration.startupGrace = .zero
            configuration.onEpisode = { collector.append($0) }
            let watchdog = Perf.HangWatchdog(monitoring: .cooperativePool, configuration: configuration)
            watchdog.start()
            #expect(try await waitUntil(seconds: 5) { watchdog.statistics.pingsSent >= 10 })
            watchdog.stop()
            #expect(collector.all.filter { $0.kind == .hang }.isEmpty)
        }

        @Test func customTargetAndInProgressReports() async throws {
            let queue = DispatchQueue(label: "watchdog-test-custom")
            let collector = EpisodeCollector()
            let handler = RecordingHangHandler()
            HangReporting.install(handler)
            defer { HangReporting.install(nil) }
            let fatal = EpisodeCollector()
            var configuration = Perf.HangWatchdog.Configuration()
            configuration.startupGrace = .zero
            configuration.fatalAfter = .milliseconds(1_100)
            configuration.onFatal = { fatal.append($0) }
            configuration.onEpisode = { collector.append($0) }
            let watchdog = Perf.HangWatchdog(
                monitoring: .custom(name: "event-loop", enqueue: { queue.async(execute: $0) }),
                configuration: configuration)
            watchdog.start()
            defer { watchdog.stop() }
            #expect(try await waitUntil(seconds: 5) { watchdog.statistics.pingsSent >= 6 })
            // Blocked until the fatal report is in, not for a fixed 1.3 s: with the watchdog thread
            // starved on a loaded machine, stalls are taken out of the hang's length and a fixed
            // block could end before 1.1 s of it had been counted (under load it did).
            queue.async { watchdogTestBlockUntil(limitMs: 20_000) { !fatal.all.isEmpty } }
            #expect(try await waitUntil(seconds: 30) { collector.all.contains { $0.kind == .hang } })
            watchdog.stop()
            let ended = try #require(collector.all.first { $0.kind == .hang })
            #expect(ended.targetName == "event-loop")
            #expect(ended.fatal)
            #expect(handler.ended.filter { $0.kind == .hang }.map(\.id) == [ended.id])
            let ongoing = try #require(handler.ongoing.first)
            #expect(ongoing.id == ended.id && ongoing.inProgress && ongoing.lowerMs >= 1_000)
            #expect(ongoing.stuckFrames.contains { $0.symbol?.contains("watchdogTestBlockUntil") == true })
            #expect(fatal.all.count == 1 && fatal.all.first?.fatal == true)
        }
    }
}

/// Records what the watchdog reports through the facade's seam.
final class RecordingHangHandler: HangEventHandler {
    private let ongoingEpisodes = EpisodeCollector()
    private let endedEpisodes = EpisodeCollector()

    func hangOngoing(_ episode: Perf.HangWatchdog.Episode, id: UInt64) { ongoingEpisodes.append(episode) }
    func hangEnded(_ episode: Perf.HangWatchdog.Episode, id: UInt64) { endedEpisodes.append(episode) }

    var ongoing: [Perf.HangWatchdog.Episode] { ongoingEpisodes.all }
    var ended: [Perf.HangWatchdog.Episode] { endedEpisodes.all }
}

/// Runs `perf-test-child watchdog …` (built beside the test bundle), waits for `ready`, lets
/// `scenario` act on its pid, then closes its stdin and returns every line it printed.
enum WatchdogChild {
    /// Starts the child, waits for "ready", plays `scenario` with the child's pid, then, when
    /// `expected` is given, reads until a line contains it (a 10 s safety net kills a child that
    /// never prints it), closes the child's input and returns its lines.
    static func run(
        _ arguments: [String], scenario: (Int32) -> Void = { _ in }, until expected: String? = nil
    ) throws -> [String] {
        let child = try ChildProcess(executable: BuildProducts.testChild, arguments: arguments, withStandardInput: true)
        var lines: [String] = []
        func read(until found: (String) -> Bool, seconds: Double) -> Bool {
            let deadline = monotonicSeconds() + seconds
            while let line = child.readLine(timeoutSeconds: max(0, deadline - monotonicSeconds())) {
                lines.append(line)
                if found(line) { return true }
            }
            return false
        }
        guard read(until: { $0 == "ready" }, seconds: 30) else {
            child.killAndWait()
            throw ChildProcess.Failure(description: "the watchdog child never became ready: \(lines)")
        }
        scenario(child.pid)
        if let expected, !read(until: { $0.contains(expected) }, seconds: 10) {
            child.send(SIGKILL)
        }
        child.closeStandardInput()
        lines += child.readRemainingLines()
        child.wait()
        return lines
    }
}

/// In the serialized global-state suite: `Perf.shutdown()` in a facade test stops every running
/// watchdog, this one included, before it ticks.
extension PerfGlobalStateTests {
    @Suite struct WatchdogLifecycleTests {
        @Test func droppingTheLastReferenceStopsTheThread() async throws {
            let statistics: @Sendable () -> Perf.HangWatchdog.Statistics
            do {
                let watchdog = Perf.HangWatchdog(monitoring: .queue(DispatchQueue(label: "watchdog-test-drop")))
                watchdog.start()
                #expect(try await waitUntil(seconds: 5) { watchdog.statistics.ticks >= 1 })
                weak let weakWatchdog = watchdog
                statistics = { weakWatchdog?.statistics ?? .init() }
            }
            // `deinit` joined the thread; nothing holds the watchdog any more.
            #expect(statistics() == .init())
        }

        @Test func pauseRecordsItsReasonUntilResume() {
            let watchdog = Perf.HangWatchdog(monitoring: .queue(DispatchQueue(label: "watchdog-test-pause")))
            watchdog.pause(reason: "migration")
            #expect(watchdog.pauseReason == "migration")
            watchdog.resume()
            #expect(watchdog.pauseReason == nil)
        }
    }
}
