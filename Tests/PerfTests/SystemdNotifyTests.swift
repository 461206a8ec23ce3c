// systemd's notification protocol without global state: `$NOTIFY_SOCKET` parsing, the watchdog
// variables, the keep-alive schedule, the detector's unanswered time and real datagrams to a
// socket this test binds.
import Foundation
import Glibc
import PerfTestSupport
import Testing

@testable import Perf

@Suite struct SystemdNotifyTests {
    private func parse(_ value: String) -> Result<NotifySocketAddress, NotifySocketAddress.Problem> {
        do throws(NotifySocketAddress.Problem) {
            return .success(try NotifySocketAddress(parsing: value))
        } catch {
            return .failure(error)
        }
    }

    @Test func aPathAndAnAbstractNameAreAddresses() {
        #expect(parse("/run/systemd/notify") == .success(.path("/run/systemd/notify")))
        #expect(parse("@/org/systemd/notify") == .success(.abstract(Array("/org/systemd/notify".utf8))))
        #expect(NotifySocketAddress.path("/a").sunPathBytes == [UInt8(ascii: "/"), UInt8(ascii: "a"), 0])
        #expect(NotifySocketAddress.abstract([UInt8(ascii: "x")]).sunPathBytes == [0, UInt8(ascii: "x")])
    }

    @Test func unusableValuesSayWhy() {
        #expect(parse("") == .failure(.empty))
        #expect(parse("@") == .failure(.empty))
        #expect(parse("run/notify") == .failure(.unsupported))
        #expect(parse("vsock:2:1234") == .failure(.unsupported))
        #expect(parse("/a\u{0}b") == .failure(.embeddedNUL))
        // sun_path holds 108 bytes: 107 of path and its NUL, or a NUL and 107 of name.
        let longest = "/" + String(repeating: "p", count: 106)
        #expect(parse(longest) == .success(.path(longest)))
        #expect(parse("/" + String(repeating: "p", count: 107)) == .failure(.tooLong(108)))
        #expect(
            parse("@" + String(repeating: "n", count: 107))
                == .success(.abstract(Array(repeating: UInt8(ascii: "n"), count: 107))))
        #expect(parse("@" + String(repeating: "n", count: 108)) == .failure(.tooLong(108)))
    }

    @Test func theWatchdogIsOnlyForTheProcessItNames() throws {
        let pid: pid_t = 4242
        let socket = ["NOTIFY_SOCKET": "/run/notify"]
        let notifier = SystemdNotifier(address: .path("/run/notify"))
        #expect(SystemdWatchdogEnvironment(environment: socket, pid: pid) == .off)
        #expect(
            SystemdWatchdogEnvironment(environment: socket.merging(["WATCHDOG_USEC": "400000"]) { $1 }, pid: pid)
                == .on(notifier: notifier, timeoutNanos: 400_000_000))
        #expect(
            SystemdWatchdogEnvironment(
                environment: socket.merging(["WATCHDOG_USEC": "400000", "WATCHDOG_PID": "4242"]) { $1 }, pid: pid)
                == .on(notifier: notifier, timeoutNanos: 400_000_000))
        // Inherited by another process (a child of the service): not ours to feed.
        #expect(
            SystemdWatchdogEnvironment(
                environment: socket.merging(["WATCHDOG_USEC": "400000", "WATCHDOG_PID": "4243"]) { $1 }, pid: pid)
                == .off)
        for bad in [
            ["WATCHDOG_USEC": "0"], ["WATCHDOG_USEC": "-5"], ["WATCHDOG_USEC": "2s"],
            ["WATCHDOG_USEC": "1000", "WATCHDOG_PID": "me"], ["WATCHDOG_USEC": "1000", "NOTIFY_SOCKET": "notify"],
        ] {
            let state = SystemdWatchdogEnvironment(environment: socket.merging(bad) { $1 }, pid: pid)
            guard case .invalid = state else {
                Issue.record("\(bad) gave \(state)")
                continue
            }
        }
        #expect(SystemdWatchdogEnvironment(environment: ["WATCHDOG_USEC": "1000"], pid: pid) != .off)
    }

    @Test func keepAliveEveryPeriodWhileAnsweredAndNoneFromTheLimit() {
        let ms: UInt64 = 1_000_000
        var schedule = SystemdKeepAlive(periodNanos: 200 * ms, limitNanos: 800 * ms)
        var sent: [UInt64] = []
        // 50 ms ticks; the target stops answering at 1,000 ms and answers again at 3,000 ms.
        for tick in stride(from: UInt64(0), through: 4_000, by: 50) {
            let unanswered = (1_000..<3_000).contains(tick) ? (tick - 1_000) * ms : 0
            if schedule.shouldSend(nowNanos: tick * ms, unansweredNanos: unanswered) { sent.append(tick) }
        }
        #expect(sent == [0, 200, 400, 600, 800, 1_000, 1_200, 1_400, 1_600, 3_000, 3_200, 3_400, 3_600, 3_800, 4_000])
    }

    @Test func theLimitDefaultsToFatalAfterThenOngoingAfterAndNeverUndercutsTheJournal() {
        var configuration = Perf.HangWatchdog.Configuration()
        configuration.ongoingAfter = .seconds(1)
        #expect(SystemdKeepAlive.limitNanos(.init(), configuration) == 1_000_000_000)
        configuration.fatalAfter = .seconds(20)
        #expect(SystemdKeepAlive.limitNanos(.init(), configuration) == 20_000_000_000)
        #expect(SystemdKeepAlive.limitNanos(.init(hangLimit: .seconds(5)), configuration) == 5_000_000_000)
        #expect(SystemdKeepAlive.limitNanos(.init(hangLimit: .milliseconds(10)), configuration) == 1_000_000_000)
    }

    @Test func theDetectorSaysHowLongThePingHasGoneUnanswered() {
        var configuration = Perf.HangWatchdog.Configuration()
        configuration.startupGrace = .zero
        var detector = HangDetector(timing: HangTiming(configuration), startNanos: 0, debuggerAttached: { false })
        let ms: UInt64 = 1_000_000
        var served: ServedPing?
        var unanswered: [UInt64: UInt64] = [:]
        for tick in stride(from: UInt64(50), through: 2_000, by: 50) {
            let output = detector.tick(
                HangTick(now: tick * ms, scheduled: tick * ms, served: served, paused: tick > 1_500))
            unanswered[tick] = output.unansweredNanos / ms
            // Answered at once until 500 ms, then never.
            if let sequence = output.sendPing, tick < 500 {
                served = ServedPing(sequence: sequence, servedNanos: tick * ms, tid: 1)
            }
        }
        #expect(unanswered[400] == 0)
        #expect(unanswered[500] == 0, "the ping sent at 450 ms is answered")
        #expect(unanswered[550] == 50)
        #expect(unanswered[1_500] == 1_000)
        #expect(unanswered[1_550] == 0, "paused")
    }

    @Test(arguments: NotifyListener.Kind.allCases)
    func aDatagramReachesTheSocket(kind: NotifyListener.Kind) throws {
        let directory = try TemporaryDirectory("sd-send")
        defer { directory.remove() }
        let listener = try NotifyListener(kind, in: directory.url)
        let notifier = try SystemdNotifier.fromEnvironment(["NOTIFY_SOCKET": listener.value])?.get()
        #expect(notifier?.send("READY=1") == 0)
        #expect(notifier?.send("WATCHDOG=1") == 0)
        #expect(listener.receive(timeoutSeconds: 5)?.text == "READY=1")
        #expect(listener.receive(timeoutSeconds: 5)?.text == "WATCHDOG=1")
    }

    @Test func aSocketNobodyListensOnFailsWithoutBlocking() throws {
        let directory = try TemporaryDirectory("sd-none")
        defer { directory.remove() }
        let notifier = SystemdNotifier(address: .path(directory.file("absent").path))
        #expect(notifier.send("READY=1") == ENOENT)
        let abstract = SystemdNotifier(address: .abstract(Array("perf-test-absent-\(getpid())".utf8)))
        #expect(abstract.send("READY=1") == ECONNREFUSED)
    }
}
