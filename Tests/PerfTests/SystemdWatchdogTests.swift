// Perf under a stand-in for systemd: `READY=1` from `Perf.markReady()`, `WATCHDOG=1` from a linked
// hang watchdog while its queue answers and none once a hang passes the limit, and, after the
// kill systemd would then send, a next start that reports the fatal hang with its culprit.
import Dispatch
import Foundation
import Glibc
import PerfCore
import PerfTestSupport
import Synchronization
import Testing

@testable import Perf

/// Nested in the serialized global-state suite: these tests install Perf, start watchdogs (which
/// `Perf.shutdown()` elsewhere would stop) and reset the ready flag.
extension PerfGlobalStateTests {
    @Suite struct SystemdWatchdogTests {
        @Test(arguments: NotifyListener.Kind.allCases)
        func markReadySendsReadyOnce(kind: NotifyListener.Kind) throws {
            let directory = try TemporaryDirectory("sd-ready")
            defer { directory.remove() }
            let listener = try NotifyListener(kind, in: directory.url)
            PerfState.readyMarked.store(false, ordering: .relaxed)
            Perf.install(
                Perf.Configuration(app: Perf.AppInfo(name: "sd-ready"), recording: .disabled),
                environment: ["NOTIFY_SOCKET": listener.value], clock: SystemClock(), report: { _ in })
            defer { Perf.shutdown() }
            Perf.markReady()
            Perf.markReady()
            #expect(listener.receive(timeoutSeconds: 5)?.text == "READY=1")
            #expect(listener.receive(timeoutSeconds: 0.3) == nil, "only the first call counts")
        }

        @Test func anUnusableNotifySocketIsReportedOnceAtInstall() {
            let messages = MessageLog()
            Perf.install(
                Perf.Configuration(app: Perf.AppInfo(name: "sd-bad"), recording: .disabled),
                environment: ["NOTIFY_SOCKET": "relative/notify"], clock: SystemClock(), report: messages.append)
            Perf.shutdown()
            #expect(messages.all.count == 1)
            #expect(messages.all.first?.contains("NOTIFY_SOCKET=\"relative/notify\"") == true, "\(messages.all)")
        }

        /// Runs a linked watchdog on a healthy queue for `seconds` and returns the datagrams.
        private func keepAlives(environment: [String: String], listener: NotifyListener, seconds: Double) -> [String] {
            let queue = DispatchQueue(label: "sd-keepalive")
            var configuration = Perf.HangWatchdog.Configuration()
            var link = Perf.HangWatchdog.SystemdLink()
            link.environment = environment
            configuration.systemdWatchdog = link
            let watchdog = Perf.HangWatchdog(monitoring: .queue(queue), configuration: configuration)
            watchdog.start()
            let end = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
            let messages = listener.receiveAll(untilNanos: end)
            watchdog.stop()
            return messages.map(\.text)
        }

        @Test func aLinkedWatchdogFeedsOnlyTheProcessWatchdogPIDNames() throws {
            let directory = try TemporaryDirectory("sd-pid")
            defer { directory.remove() }
            let listener = try NotifyListener(.path, in: directory.url)
            let base = ["NOTIFY_SOCKET": listener.value, "WATCHDOG_USEC": "200000"]
            let ours = keepAlives(
                environment: base.merging(["WATCHDOG_PID": "\(getpid())"]) { $1 }, listener: listener, seconds: 1)
            // Every 100 ms for 1 s, on 50 ms ticks of a shared host: a loose lower bound.
            #expect(ours.count >= 4 && ours.count <= 12, "\(ours)")
            #expect(Set(ours) == ["WATCHDOG=1"])
            let theirs = keepAlives(
                environment: base.merging(["WATCHDOG_PID": "\(getpid() + 1)"]) { $1 }, listener: listener, seconds: 0.6)
            #expect(theirs.isEmpty, "\(theirs)")
            let unlinked = keepAlives(environment: [:], listener: listener, seconds: 0.3)
            #expect(unlinked.isEmpty)
        }

        /// The whole story with a child process as the service: ready, fed while healthy, silent
        /// once its queue's hang passes the limit, killed, and explained by the next start.
        @Test(arguments: NotifyListener.Kind.allCases)
        func aHangPastTheLimitStopsTheKeepAliveAndTheNextStartReportsIt(kind: NotifyListener.Kind) throws {
            let directory = try TemporaryDirectory("sd-story")
            defer { directory.remove() }
            let listener = try NotifyListener(kind, in: directory.url)
            let data = directory.file("data")
            let usec: UInt64 = 400_000
            let limitMs: UInt64 = 800
            var environment = ProcessInfo.processInfo.environment
            for name in ["WATCHDOG_PID", "PERF_RECORDING", "PERF_DIR", "STATE_DIRECTORY"] { environment[name] = nil }
            environment["NOTIFY_SOCKET"] = listener.value
            environment["WATCHDOG_USEC"] = "\(usec)"
            let child = try ChildProcess(
                executable: BuildProducts.testChild, arguments: ["systemd", data.path, "limitMs=\(limitMs)"],
                withStandardInput: true, environment: environment)
            #expect(child.readLines(until: { $0 == "ready" }, timeoutSeconds: 60) != nil)
            // Healthy: READY=1, then WATCHDOG=1 every 200 ms.
            var healthy: [NotifyMessage] = []
            let healthyDeadline = monotonicSeconds() + 30
            while healthy.filter({ $0.text == "WATCHDOG=1" }).count < 3, monotonicSeconds() < healthyDeadline {
                if let message = listener.receive(timeoutSeconds: 1) { healthy.append(message) }
            }
            #expect(healthy.first?.text == "READY=1", "\(healthy.map(\.text))")
            #expect(healthy.filter { $0.text == "WATCHDOG=1" }.count >= 3)
            // Hang the queue and read through the limit (plus an allowance for a shared 2-core host).
            child.closeStandardInput()
            let blockedLine = child.readLines(until: { $0.hasPrefix("blocked ") }, timeoutSeconds: 30)?.last
            let blocked = try #require(blockedLine.flatMap { UInt64($0.dropFirst(8)) })
            let hanging = listener.receiveAll(untilNanos: blocked + limitMs * 1_000_000 + 400_000_000)
            #expect(
                hanging.contains { $0.text == "WATCHDOG=1" && $0.arrivedNanos > blocked },
                "still fed while the hang is shorter than the limit")
            // Past the limit: whatever was sent before now is read; then 3 keep-alive periods of
            // silence. (Arrival times are when this test read a datagram, late when it is starved,
            // so lateness is judged by what arrives after the drain, never by a timestamp.)
            let drained = listener.receiveAll(untilNanos: 0)
            let after = listener.receiveAll(untilNanos: DispatchTime.now().uptimeNanoseconds + 3 * usec / 2 * 1_000)
            #expect(
                after.isEmpty, "\(after.map(\.text)) more than \(limitMs) ms into the hang (drained \(drained.count))")
            // What systemd does when the keep-alive stops: kill the service. Then the next start.
            child.killAndWait()
            let childSession = try LedgerReader(directory: data).readAll().events
                .first { $0.kind == .session && $0.name == "start" }?.session
            Perf.install(
                Perf.Configuration(directory: data, app: Perf.AppInfo(name: "next"), recording: .enabled),
                environment: [:], clock: SystemClock(), report: { _ in })
            Perf.shutdown()
            let events = try LedgerReader(directory: data).readAll().events.filter { $0.session == childSession }
            #expect(events.contains { $0.kind == .session && $0.name == "crashed" })
            let fatal = events.filter { $0.kind == .hang && $0.fatal == true }
            try #require(fatal.count == 1, "\(events)")
            #expect(fatal[0].name == "systemd.feed")
            #expect(fatal[0].culprit?.contains("waitForStuckFeed") == true, "\(fatal[0])")
            #expect((fatal[0].durationMs ?? 0) >= 300, "journalled in progress (ongoingAfter 300 ms) before the kill")
        }
    }
}

/// Messages an injected `report` received.
final class MessageLog: Sendable {
    private let messages = Mutex<[String]>([])

    func append(_ message: String) { messages.withLock { $0.append(message) } }

    var all: [String] { messages.withLock { $0 } }
}
