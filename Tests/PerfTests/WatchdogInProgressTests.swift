// No hang lost: a watchdog stopped or paused during a hang, or Perf shut down during one, writes
// it (marked in progress, with the time it had lasted) instead of dropping it.
import Dispatch
import Foundation
import Glibc
import PerfTestSupport
import Synchronization
import Testing

@testable import Perf

/// Blocks the calling thread in `read` on a pipe until the test writes to it: a hang whose end the
/// test controls, blocked in a system call as a real service's would be.
final class PipeGate: @unchecked Sendable {
    private var fds: [Int32] = [-1, -1]

    init() throws {
        guard pipe(&fds) == 0 else { throw POSIXError(.EMFILE) }
    }

    deinit {
        close(fds[0])
        close(fds[1])
    }

    func open() {
        var byte: UInt8 = 1
        _ = write(fds[1], &byte, 1)
    }

    /// The function a hang line must name.
    @inline(never)
    func watchdogTestWaitOnPipe() -> Int {
        var byte: UInt8 = 0
        return read(fds[0], &byte, 1)
    }
}

extension PerfGlobalStateTests {
    @Suite struct WatchdogInProgressTests {
        private func makeWatchdog(_ queue: DispatchQueue, _ collector: EpisodeCollector) -> Perf.HangWatchdog {
            var configuration = Perf.HangWatchdog.Configuration()
            configuration.onEpisode = { collector.append($0) }
            return Perf.HangWatchdog(monitoring: .queue(queue), configuration: configuration)
        }

        /// Blocks `queue` on the gate and waits until the watchdog has sampled the hang twice
        /// (the second sample comes 400 ms into it: a hang, not a hitch).
        private func blockUntilSampledTwice(_ queue: DispatchQueue, _ gate: PipeGate, _ watchdog: Perf.HangWatchdog)
            async throws
        {
            #expect(try await waitUntil(seconds: 5) { watchdog.statistics.pingsSent >= 3 })
            let result = Mutex<Int?>(nil)
            queue.async { result.withLock { $0 = gate.watchdogTestWaitOnPipe() } }
            #expect(try await waitUntil(seconds: 10) { watchdog.statistics.samplesTaken >= 2 })
        }

        private func expectInProgressHang(_ episode: Perf.HangWatchdog.Episode?) {
            #expect(episode?.inProgress == true)
            #expect(episode?.kind == .hang)
            #expect((episode?.lowerMs ?? 0) >= 400)
            #expect(
                episode?.culprit?.symbol?.contains("watchdogTestWaitOnPipe") == true, "\(String(describing: episode))")
            #expect(episode?.wait?.call == "read", "\(String(describing: episode?.wait))")
        }

        @Test func stopDuringAHangWritesItInProgress() async throws {
            let queue = DispatchQueue(label: "watchdog-test-stop-in-hang")
            let collector = EpisodeCollector()
            let watchdog = makeWatchdog(queue, collector)
            let gate = try PipeGate()
            watchdog.start()
            try await blockUntilSampledTwice(queue, gate, watchdog)
            watchdog.stop()
            // `stop()` returned: the episode was delivered before the thread ended.
            #expect(collector.all.count == 1, "\(collector.all)")
            expectInProgressHang(collector.all.first)
            #expect(watchdog.statistics.signalsSent == 0, "a thread blocked in read is never signalled")
            gate.open()
        }

        @Test func pauseDuringAHangWritesItInProgress() async throws {
            let queue = DispatchQueue(label: "watchdog-test-pause-in-hang")
            let collector = EpisodeCollector()
            let watchdog = makeWatchdog(queue, collector)
            let gate = try PipeGate()
            watchdog.start()
            defer { watchdog.stop() }
            try await blockUntilSampledTwice(queue, gate, watchdog)
            watchdog.pause(reason: "migration")
            #expect(try await waitUntil(seconds: 5) { !collector.all.isEmpty })
            expectInProgressHang(collector.all.first)
            gate.open()
            watchdog.resume()
        }

        @Test func shutdownDuringAHangWritesTheLedgerLineAndStopsTheWatchdog() async throws {
            let directory = try TemporaryDirectory("watchdog-shutdown-in-hang")
            defer { directory.remove() }
            Perf.install(
                Perf.Configuration(
                    directory: directory.url, app: Perf.AppInfo(name: "in-progress"), recording: .enabled))
            let queue = DispatchQueue(label: "watchdog-test-shutdown-in-hang")
            let collector = EpisodeCollector()
            let watchdog = makeWatchdog(queue, collector)
            let gate = try PipeGate()
            watchdog.start()
            try await blockUntilSampledTwice(queue, gate, watchdog)
            Perf.shutdown()
            #expect(!watchdog.isRunning)
            gate.open()
            let (events, _) = try LedgerReader(directory: directory.url).readAll()
            let hangs = events.filter { $0.kind == .hang }
            #expect(hangs.count == 1, "\(hangs)")
            let hang = try #require(hangs.first)
            #expect(hang.extra["inProgress"] == .bool(true))
            #expect((hang.lowerMs ?? 0) >= 400)
            #expect(hang.culprit?.contains("watchdogTestWaitOnPipe") == true)
            if case .string(let wait) = hang.extra["wait"] {
                #expect(wait.hasPrefix("read(fd "), "\(wait)")
                #expect(wait.contains("pipe "), "\(wait)")
            } else {
                Issue.record("no wait on the hang line: \(hang)")
            }
            // The session ended after the hang line: the shutdown wrote it while the ledger was open.
            let sessionEnd = events.lastIndex { $0.kind == .session && $0.name == "end" }
            let hangIndex = events.firstIndex { $0.kind == .hang }
            #expect(sessionEnd != nil && hangIndex != nil && hangIndex! < sessionEnd!)
        }
    }
}
