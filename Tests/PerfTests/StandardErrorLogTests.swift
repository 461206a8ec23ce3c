// The stderr log of hangs and crashes, without a process: the line format, the privacy filter on
// every part the program named, and the rate limit with an injected clock and writer.
import Foundation
import PerfCore
import PerfTestSupport
import Synchronization
import Testing

@testable import Perf

@Suite struct StandardErrorLogTests {
    private static func hang(
        target: String = "db.writer", culprit: String? = "Store.load()",
        wait: String? = "read(fd 7 → /var/lib/app/db.sqlite)",
        kind: HangRecord.Kind = .hang, durationMs: Double = 612.4, suppressed: String? = nil
    ) -> HangRecord {
        HangRecord(
            kind: kind, lowerMs: durationMs - 20, upperMs: durationMs + 20, stallMs: 0, suppressed: suppressed,
            thread: "worker (tid 5)", culprit: culprit, targetName: target, wallNanos: 1, durationMs: durationMs,
            wait: wait)
    }

    /// What a log wrote, one element per write.
    private final class Written: Sendable {
        let lines = Mutex<[String]>([])

        func append(_ bytes: [UInt8]) { lines.withLock { $0.append(String(decoding: bytes, as: UTF8.self)) } }
    }

    /// A log writing into memory, on a manual clock.
    private final class Capture: Sendable {
        let clock = ManualClock()
        let written = Written()
        let log: StandardErrorLog

        init(_ settings: Perf.LogLines = Perf.LogLines()) {
            let clock = self.clock
            let written = self.written
            log = StandardErrorLog(settings, now: { clock.monotonicNanos() }, write: written.append)
        }

        func send(_ hang: HangRecord) { log.receive(SequencedRecord(sequence: 1, record: .hang(hang))) }

        /// Every line written, after the log finished.
        func finish() -> [String] {
            #expect(log.finish(timeoutSeconds: 10))
            let written = self.written.lines.withLock { $0 }
            #expect(
                written.allSatisfy { $0.hasSuffix("\n") && $0.dropLast().firstIndex(of: "\n") == nil },
                "one line per write")
            return written.map { String($0.dropLast()) }
        }
    }

    @Test func aHangIsOneLineWithItsDurationTargetCulpritAndWait() {
        #expect(
            LogLineText.hang(Self.hang())
                == "perf: hang 612 ms on db.writer in Store.load() (read(fd 7 → /var/lib/app/db.sqlite))")
        #expect(LogLineText.hang(Self.hang(culprit: nil, wait: nil)) == "perf: hang 612 ms on db.writer")
        var inProgress = Self.hang(kind: .hitch, durationMs: 150)
        inProgress.inProgress = true
        #expect(LogLineText.hang(inProgress).hasPrefix("perf: hitch 150 ms on db.writer in Store.load() ("))
        #expect(LogLineText.hang(inProgress).hasSuffix(") (in progress)"))
    }

    @Test func aMergedOrThunkCulpritIsNamedWithItsMark() {
        #expect(
            LogLineText.hang(Self.hang(culprit: "merged barsPerf.barsBlockedFunction(ms: Swift.Int) -> ()", wait: nil))
                == "perf: hang 612 ms on db.writer in barsPerf.barsBlockedFunction(ms: Swift.Int) -> () (merged)")
        let thunk = LogLineText.hang(
            Self.hang(culprit: "partial apply for closure #1 () -> () in service.main() -> ()"))
        #expect(thunk.hasPrefix("perf: hang 612 ms on db.writer in closure "), "\(thunk)")
        #expect(thunk.hasSuffix(" in service.main() -> () (thunk) (read(fd 7 → /var/lib/app/db.sqlite))"), "\(thunk)")
        #expect(
            LogLineText.hang(Self.hang(culprit: "dispatch thunk of service.Store.load() -> ()", wait: nil))
                == "perf: hang 612 ms on db.writer in service.Store.load() -> () (thunk)")
        // The privacy filter's cut may shorten the name, never lose the mark.
        let long = "merged App." + String(repeating: "a", count: 300) + "() -> ()"
        #expect(LogLineText.hang(Self.hang(culprit: long, wait: nil)).hasSuffix(" (merged)"))
    }

    @Test func urlsTokensAndNewlinesNamedByTheProgramAreFiltered() {
        let line = LogLineText.hang(
            Self.hang(
                target: "https://admin:hunter2@db.example.com:5432/orders?token=s3cret#frag",
                culprit: "Store.load()\nperf: hang 1 ms on forged",
                wait: "read(fd 9 → https://api.example.com/v1/items?session=abc123)"))
        #expect(!line.contains("s3cret") && !line.contains("abc123") && !line.contains("hunter2"), "\(line)")
        #expect(!line.contains("example.com") && !line.contains("token") && !line.contains("session="), "\(line)")
        #expect(!line.contains("\n"), "one line stays one line")
        #expect(line.hasPrefix("perf: hang 612 ms on /orders in Store.load() perf: hang 1 ms on forged ("), "\(line)")
        #expect(line.contains("/v1/items"))
    }

    @Test func aCrashedSessionAndTheHangItDiedInAreToldAtTheNextStart() {
        let info = SessionInfo(
            id: "18dfb7403dc988c9", pid: 4123, startWallNanos: 1, app: .init(name: "myservice", version: "1.4.0"))
        let marker = OngoingMarker(
            id: 1, kind: "hang", name: "db.writer", startedWallNanos: 1, lastKnownDurationNanos: 20_350_000_000,
            payload: ["culprit": "Store.load()", "wait": "futex(pthread mutex)"])
        let crashed = RecoveredSession(id: info.id, info: info, status: .crashed, fatalMarkers: [marker])
        #expect(
            LogLineText.recovered(crashed) == [
                "perf: session 18dfb7403dc988c9 crashed (app myservice 1.4.0, pid 4123)",
                "perf: fatal hang 20350 ms on db.writer in Store.load() (futex(pthread mutex)) "
                    + "(session 18dfb7403dc988c9 crashed)",
            ])
        let clean = RecoveredSession(id: info.id, info: info, status: .terminated(endWallNanos: 2))
        #expect(LogLineText.recovered(clean) == [])
    }

    @Test func fifteenHangsGiveTheLimitThenOneSuppressedLine() {
        let capture = Capture(Perf.LogLines(maximumLines: 3, window: .seconds(60)))
        for index in 0..<15 {
            capture.send(Self.hang(durationMs: Double(300 + index)))
            capture.clock.advance(byMilliseconds: 100)
        }
        let lines = capture.finish()
        #expect(
            lines == [
                "perf: hang 300 ms on db.writer in Store.load() (read(fd 7 → /var/lib/app/db.sqlite))",
                "perf: hang 301 ms on db.writer in Store.load() (read(fd 7 → /var/lib/app/db.sqlite))",
                "perf: hang 302 ms on db.writer in Store.load() (read(fd 7 → /var/lib/app/db.sqlite))",
                "perf: 12 more lines suppressed (at most 3 per 60 s)",
            ])
    }

    @Test func theSuppressedCountIsToldWhenTheWindowReopens() {
        let capture = Capture(Perf.LogLines(maximumLines: 2, window: .seconds(10)))
        for _ in 0..<5 { capture.send(Self.hang()) }
        capture.clock.advance(byMilliseconds: 10_001)
        capture.send(Self.hang(durationMs: 900))
        let lines = capture.finish()
        #expect(lines.count == 4, "\(lines)")
        #expect(lines.dropLast().last == "perf: 3 more lines suppressed (at most 2 per 10 s)")
        #expect(lines.last?.hasPrefix("perf: hang 900 ms") == true, "the new window's first line follows")
    }

    @Test func theWriterThreadTellsTheCountOnceTheWindowIsOverWithoutANewHang() async throws {
        let written = Written()
        let log = StandardErrorLog(
            Perf.LogLines(maximumLines: 1, window: .milliseconds(50)), now: { SystemClock().monotonicNanos() },
            write: written.append)
        for _ in 0..<3 { log.receive(SequencedRecord(sequence: 1, record: .hang(Self.hang()))) }
        let told = try await waitUntil(seconds: 10) { written.lines.withLock { $0.count } == 2 }
        #expect(told)
        #expect(written.lines.withLock { $0.last } == "perf: 2 more lines suppressed (at most 1 per 0.05 s)\n")
        #expect(log.finish())
        #expect(written.lines.withLock { $0.count } == 2, "nothing left to tell at the end")
    }

    @Test func suppressedEpisodesAndHitchesGetNoLineUnlessAsked() {
        let capture = Capture()
        capture.send(Self.hang(suppressed: "stopped"))
        capture.send(Self.hang(kind: .hitch, durationMs: 150))
        capture.log.receive(SequencedRecord(sequence: 1, record: .note(NoteRecord(name: "x", wallNanos: 1))))
        #expect(capture.finish() == [])
        let hitches = Capture(Perf.LogLines(includeHitches: true))
        hitches.send(Self.hang(kind: .hitch, durationMs: 150))
        #expect(hitches.finish().map { $0.hasPrefix("perf: hitch 150 ms on db.writer") } == [true])
    }

    @Test func theRateLimitCountsPerWindow() {
        var limit = LogRateLimit(maximum: 2, windowNanos: 1_000)
        #expect(limit.admit(at: 0) == (true, 0))
        #expect(limit.admit(at: 10) == (true, 0))
        #expect(limit.admit(at: 20) == (false, 0))
        #expect(limit.reportDue == 1_000)
        #expect(limit.expire(at: 999) == 0)
        #expect(limit.admit(at: 500) == (false, 0))
        #expect(limit.expire(at: 1_000) == 2)
        #expect(limit.reportDue == nil)
        #expect(limit.admit(at: 1_001) == (true, 0))
        #expect(limit.admit(at: 1_002) == (true, 0))
        #expect(limit.admit(at: 1_003) == (false, 0))
        #expect(limit.admit(at: 2_500) == (true, 1), "a line after the window tells the count first")
        #expect(limit.drain() == 0)
    }
}
