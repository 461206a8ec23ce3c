// The facade end to end: install, spans, notes, markReady, the consent gate and inert calls.
// Perf is process-global, so this suite runs serialized and shuts down after every test.
import CPerfAllocCounter
import Foundation
import PerfCore
import PerfReport
import PerfTestSupport
import Testing

@testable import Perf

/// Every suite that installs Perf (process-global state) nests here so they never overlap.
@Suite(.serialized) enum PerfGlobalStateTests {}

extension PerfGlobalStateTests {
    @Suite struct FacadeTests {
        private static let enabledEnvironment: [String: String] = [:]

        /// Installs into a fresh directory with an injected clock, runs `body`, shuts down, and
        /// returns the ledger's events.
        private func withInstalled(
            recording: Perf.Recording = .enabled, noteFloorSeconds: Double = 30, clock: any PerfClock = SystemClock(),
            environment: [String: String] = [:], _ body: (URL) throws -> Void
        ) throws -> (events: [LedgerEvent], directory: TemporaryDirectory) {
            let directory = try TemporaryDirectory("facade")
            let configuration = Perf.Configuration(
                directory: directory.url, app: Perf.AppInfo(name: "facade-test", version: "1.0", build: "7"),
                recording: recording, noteFloorSeconds: noteFloorSeconds)
            #expect(Perf.install(configuration, environment: environment, clock: clock, report: { _ in }))
            defer { Perf.shutdown() }
            try body(directory.url)
            Perf.shutdown()
            let events = try LedgerReader(directory: directory.url).readAll().events
            return (events, directory)
        }

        @Test(
            .enabled(
                if: perf_alloc_counter_available() != 0,
                "allocations are not counted in a sanitizer build (the sanitizer's runtime owns malloc)"))
        func callsBeforeInstallAreInertAndAllocateNothing() throws {
            Perf.shutdown()
            #expect(!Perf.isInstalled)
            let before = perf_thread_alloc_count()
            for _ in 0..<1_000 {
                Perf.begin("inert.span", slowMs: 0).end()
            }
            #expect(perf_thread_alloc_count() - before == 0)
            Perf.note("inert.note")
            Perf.begin(key: "k", "inert.keyed", slowMs: nil)
            Perf.end(key: "k")
            #expect(Perf.spanHistograms()["inert.span"] == nil)
            #expect(Perf.dataDirectory == nil)
        }

        @Test func overBudgetSpanWritesOneFilteredLineAndUnderBudgetOnlyTicks() throws {
            let (events, directory) = try withInstalled { _ in
                for _ in 0..<10 { Perf.begin("facade.fast", slowMs: 60_000).end() }
                Perf.begin("facade.slow", slowMs: 0).end(
                    detail: "https://u:p@api.example.com/v1/threads?token=abc#x", count: 200)
            }
            defer { directory.remove() }
            let spans = events.filter { $0.kind == .span }
            #expect(spans.count == 1)
            let line = try #require(spans.first)
            #expect(line.name == "facade.slow")
            #expect(line.detail == "/v1/threads")
            #expect(line.count == 200)
            #expect(line.exit == "success")
            #expect(line.budgetMs == 0)
            #expect(line.site?.hasPrefix("PerfTests/FacadeTests.swift:") == true)
            #expect((Perf.spanHistograms()["facade.fast"]?.count ?? 0) >= 10)
            let raw = try String(contentsOf: directory.ledger, encoding: .utf8)
            #expect(!raw.contains("token") && !raw.contains("example.com") && !raw.contains("u:p"))
            #expect(events.first?.kind == .session && events.first?.name == "start")
            #expect(events.last?.kind == .session && events.last?.name == "end")
            #expect(Set(events.map(\.session)).count == 1)
        }

        @Test func oneEndCombinesExitDetailCountAndReasonForScopedAndKeyedSpans() throws {
            let (events, directory) = try withInstalled { _ in
                Perf.begin("facade.combined", slowMs: 0).end(
                    exit: .failure, detail: "/v1/items?page=2", count: 7, reason: "DecodingError")
                Perf.begin(key: "k", "facade.keyedCombined", slowMs: 0)
                Perf.end(key: "k", exit: .cancelled, detail: "/v1/keyed", count: 3, reason: "CancellationError")
            }
            defer { directory.remove() }
            let spans = events.filter { $0.kind == .span }
            let scoped = try #require(spans.first { $0.name == "facade.combined" })
            #expect(scoped.exit == "failure" && scoped.detail == "/v1/items" && scoped.count == 7)
            #expect(scoped.extra["reason"] == .string("DecodingError"))
            let keyed = try #require(spans.first { $0.name == "facade.keyedCombined" })
            #expect(keyed.exit == "cancelled" && keyed.detail == "/v1/keyed" && keyed.count == 3)
            #expect(keyed.extra["reason"] == .string("CancellationError"))
        }

        @Test func filesAreOwnerOnly() throws {
            let (_, directory) = try withInstalled { _ in Perf.begin("facade.mode", slowMs: 0).end() }
            defer { directory.remove() }
            let dirMode =
                try FileManager.default.attributesOfItem(atPath: directory.url.path)[.posixPermissions] as? Int
            let fileMode =
                try FileManager.default.attributesOfItem(atPath: directory.ledger.path)[.posixPermissions] as? Int
            #expect(fileMode == 0o600)
            // The test created the directory itself; a directory Perf creates is 0700.
            let created = directory.url.appendingPathComponent("nested/perf")
            try DataDirectory.prepare(created)
            let createdMode = try FileManager.default.attributesOfItem(atPath: created.path)[.posixPermissions] as? Int
            #expect(createdMode == 0o700)
            #expect(dirMode != nil)
        }

        @Test func measureExitsReachTheLedger() throws {
            struct Boom: Error {}
            let (events, directory) = try withInstalled { _ in
                let value = Perf.measure("facade.measure.ok", slowMs: 0) { 42 }
                #expect(value == 42)
                #expect(throws: Boom.self) { try Perf.measure("facade.measure.fail", slowMs: 0) { throw Boom() } }
            }
            defer { directory.remove() }
            let byName = Dictionary(events.filter { $0.kind == .span }.map { ($0.name, $0) }) { first, _ in first }
            #expect(byName["facade.measure.ok"]?.exit == "success")
            #expect(byName["facade.measure.fail"]?.exit == "failure")
            #expect(byName["facade.measure.fail"]?.extra["reason"] == .string("Boom"))
        }

        @Test func asyncMeasureDerivesCancellation() async throws {
            let directory = try TemporaryDirectory("facade-async")
            defer { directory.remove() }
            Perf.install(
                Perf.Configuration(directory: directory.url, app: Perf.AppInfo(name: "a"), recording: .enabled),
                environment: [:], clock: SystemClock(), report: { _ in })
            await #expect(throws: CancellationError.self) {
                try await Perf.measure("facade.async.cancel", slowMs: 0) { () async throws -> Int in
                    throw CancellationError()
                }
            }
            Perf.shutdown()
            let events = try LedgerReader(directory: directory.url).readAll().events
            #expect(events.first { $0.name == "facade.async.cancel" }?.exit == "cancelled")
        }

        @Test func noteFloorWritesOneLineAndCarriesTheSuppressedCount() throws {
            let clock = ManualClock()
            let (events, directory) = try withInstalled(noteFloorSeconds: 30, clock: clock) { _ in
                for _ in 0..<50 {
                    Perf.note("socket.reconnect", detail: "wss://chat.example.com/ws?session=1")
                    clock.advance(byMilliseconds: 100)
                }
                clock.advance(byMilliseconds: 30_000)
                Perf.note("socket.reconnect")
                Perf.note("other.note")
            }
            defer { directory.remove() }
            let notes = events.filter { $0.kind == .note && $0.name == "socket.reconnect" }
            #expect(notes.count == 2)
            #expect(notes.first?.detail == "/ws")
            #expect(notes.first?.extra["suppressedCount"] == nil)
            #expect(notes.last?.extra["suppressedCount"] == .int(49))
            #expect(events.contains { $0.kind == .note && $0.name == "other.note" })
        }

        /// The count rides on no later note: shutdown writes it, before the session's end, and the
        /// report counts one note and 499 held back, not two notes.
        @Test func aNoteStormThenShutdownWritesWhatTheFloorHeldBack() throws {
            let clock = ManualClock()
            let (events, directory) = try withInstalled(noteFloorSeconds: 30, clock: clock) { _ in
                for _ in 0..<500 {
                    Perf.note("db.error", detail: "constraint")
                    clock.advance(byMilliseconds: 1)
                }
            }
            defer { directory.remove() }
            let lines = events.filter { $0.kind == .note && $0.name == "db.error" }
            try #require(lines.count == 2, "\(lines)")
            #expect(lines[0].count == nil && lines[0].detail == "constraint")
            #expect(lines[0].extra["suppressedCount"] == nil)
            #expect(lines[1].count == 0 && lines[1].detail == nil && lines[1].extra["suppressedCount"] == .int(499))
            let heldBackIndex = try #require(events.firstIndex { $0.count == 0 && $0.name == "db.error" })
            let endIndex = try #require(events.firstIndex { $0.kind == .session && $0.name == "end" })
            #expect(heldBackIndex < endIndex, "the count is the session's: written before its end")

            let report = try PerformanceReport(bytes: ReportBuilder(directory: directory.url).build(), path: "r.json")
            let reported = report.ledger.events.filter { $0.kind == .note && $0.name == "db.error" }
            #expect(reported.filter { $0.count != 0 }.count == 1, "one note written")
            let held = reported.map { event -> Int64 in
                if case .int(let count)? = event.extra["suppressedCount"] { return count }
                return 0
            }
            #expect(held.reduce(0, +) == 499)
        }

        /// A window that ends with notes held back writes their count from the floor's timer,
        /// though no note of the name (only one of another name) comes after it; that line opens
        /// the next window.
        @Test func aFloorWindowsEndWritesTheHeldBackCountWithoutAnotherNote() throws {
            let clock = ManualClock()
            let (events, directory) = try withInstalled(noteFloorSeconds: 30, clock: clock) { url in
                for _ in 0..<10 {
                    Perf.note("socket.reconnect")
                    clock.advance(byMilliseconds: 100)
                }
                Perf.note("other.note")
                let timer = try #require(PerfState.runtime()?.noteFloor.timer as? ManualExpiryTimer)
                #expect(!timer.fireIfDue(nowNanos: clock.monotonicNanos()), "the window is still open")
                clock.advance(byMilliseconds: 29_000)
                #expect(timer.fireIfDue(nowNanos: clock.monotonicNanos()), "armed for the window's end")
                let written = try LedgerReader(directory: url).readAll().events.filter { $0.name == "socket.reconnect" }
                #expect(written.count == 2, "\(written)")
                #expect(written.last?.count == 0 && written.last?.extra["suppressedCount"] == .int(9))
                #expect(timer.armedDeadline == nil, "nothing is held back any more")
                clock.advance(byMilliseconds: 1_000)
                Perf.note("socket.reconnect")
                #expect(timer.armedDeadline == clock.monotonicNanos() - 1_000_000_000 + 30_000_000_000)
            }
            defer { directory.remove() }
            let lines = events.filter { $0.kind == .note && $0.name == "socket.reconnect" }
            #expect(
                lines.map(\.count) == [nil, 0, 0], "the note after the count's line was held, and written at shutdown")
            #expect(lines.map { $0.extra["suppressedCount"] } == [nil, .int(9), .int(1)])
        }

        @Test func markReadyRecordsBootOnce() throws {
            PerfState.readyMarked.store(false, ordering: .relaxed)
            let (events, directory) = try withInstalled { _ in
                Perf.markReady()
                Perf.markReady()
            }
            defer { directory.remove() }
            let boots = events.filter { $0.kind == .span && $0.name == "boot" }
            #expect(boots.count == 1)
            let duration = try #require(boots.first?.durationMs)
            #expect(duration > 0 && duration < 86_400_000)
        }

        @Test func recordingOffWritesNothingButHistogramsCount() throws {
            let directory = try TemporaryDirectory("facade-off")
            defer { directory.remove() }
            let target = directory.url.appendingPathComponent("data")
            for (recording, environment) in [
                (Perf.Recording.disabled, [String: String]()), (.enabled, ["PERF_RECORDING": "0"]),
            ] {
                let before = Perf.spanHistograms()["facade.off"]?.count ?? 0
                Perf.install(
                    Perf.Configuration(directory: target, app: Perf.AppInfo(name: "off"), recording: recording),
                    environment: environment, clock: SystemClock(), report: { _ in })
                Perf.begin("facade.off", slowMs: 0).end()
                Perf.note("facade.off.note")
                #expect(Perf.dataDirectory == nil)
                Perf.shutdown()
                #expect(Perf.spanHistograms()["facade.off"]?.count == before + 1)
                #expect(!FileManager.default.fileExists(atPath: target.path))
            }
        }

        @Test func unusableDirectoryReportsOnceAndKeepsMeasuring() throws {
            let directory = try TemporaryDirectory("facade-bad")
            defer { directory.remove() }
            let blocker = directory.url.appendingPathComponent("file")
            try Data("x".utf8).write(to: blocker)
            let messages = MessageBox()
            Perf.install(
                Perf.Configuration(
                    directory: blocker.appendingPathComponent("perf"), app: Perf.AppInfo(name: "bad"),
                    recording: .enabled),
                environment: [:], clock: SystemClock(), report: messages.append)
            Perf.begin("facade.bad", slowMs: 0).end()
            Perf.shutdown()
            let target = blocker.appendingPathComponent("perf").path
            #expect(
                messages.all == [
                    "perf: cannot use data directory '\(target)': cannot create it (\(Self.errnoText(ENOTDIR))); "
                        + "Perf records in memory only (set PERF_DIR to a writable directory, or PERF_RECORDING=0 "
                        + "to silence this)"
                ])
            #expect((Perf.spanHistograms()["facade.bad"]?.count ?? 0) >= 1)
        }

        /// A directory under /proc names the parent that cannot be made, in words, with no NSError dump.
        @Test func aDirectoryThatCannotBeMadeNamesTheParentThatFailed() {
            let messages = MessageBox()
            let target = "/proc/perf-facade-test-\(getpid())/perf"
            Perf.install(
                Perf.Configuration(
                    directory: URL(fileURLWithPath: target), app: Perf.AppInfo(name: "proc"), recording: .enabled),
                environment: [:], clock: SystemClock(), report: messages.append)
            #expect(Perf.dataDirectory == nil)
            Perf.shutdown()
            #expect(
                messages.all == [
                    "perf: cannot use data directory '\(target)': cannot create '/proc/perf-facade-test-\(getpid())' "
                        + "(\(Self.errnoText(ENOENT))); Perf records in memory only (set PERF_DIR to a writable "
                        + "directory, or PERF_RECORDING=0 to silence this)"
                ])
        }

        @Test func aDataDirectoryThatIsAFileSaysSo() throws {
            let directory = try TemporaryDirectory("facade-file")
            defer { directory.remove() }
            let file = directory.url.appendingPathComponent("perf")
            try Data("x".utf8).write(to: file)
            let failure = DataDirectory.Failure(
                directory: file.path, step: .notADirectory, path: file.path, errno: ENOTDIR)
            #expect(throws: failure) { try DataDirectory.prepare(file) }
            #expect(
                failure.report.hasPrefix(
                    "perf: cannot use data directory '\(file.path)': it exists but is not a directory; "))
            let unwritable = DataDirectory.Failure(directory: "/d", step: .notWritable, path: "/d", errno: EACCES)
            #expect(unwritable.description == "cannot write in it (\(Self.errnoText(EACCES)))")
            let ledger = DataDirectory.Failure(directory: "/d", step: .open, path: "/d/perf-events.jsonl", errno: EROFS)
            #expect(ledger.description == "cannot open '/d/perf-events.jsonl' (\(Self.errnoText(EROFS)))")
        }

        /// An unknown PERF_RECORDING is reported once, through install's report, and ignored.
        @Test func anUnknownRecordingValueIsReportedOnceAtInstall() throws {
            let directory = try TemporaryDirectory("facade-flag")
            defer { directory.remove() }
            let messages = MessageBox()
            let configuration = Perf.Configuration(
                directory: directory.url, app: Perf.AppInfo(name: "flag"), recording: .enabled)
            #expect(
                Perf.install(
                    configuration, environment: ["PERF_RECORDING": "enable"], clock: SystemClock(),
                    report: messages.append))
            Perf.begin("facade.flag", slowMs: 0).end()
            #expect(Perf.dataDirectory == directory.url, "ignored: the configuration's .enabled decides")
            Perf.shutdown()
            #expect(
                messages.all == [
                    "perf: ignoring PERF_RECORDING=\"enable\" (not one of 1, true, yes, on, 0, false, no, off); "
                        + "recording to disk is on, as the configuration's .enabled says"
                ])
            let quiet = MessageBox()
            Perf.install(
                configuration, environment: ["PERF_RECORDING": " Off "], clock: SystemClock(), report: quiet.append)
            #expect(Perf.dataDirectory == nil, "off in any spelling wins over .enabled")
            Perf.shutdown()
            #expect(quiet.all.isEmpty)
        }

        /// `strerror` as Perf's messages spell it: lower case, with the number.
        static func errnoText(_ code: Int32) -> String {
            "\(String(cString: strerror(code)).lowercased()), errno \(code)"
        }

        @Test func secondInstallWithADifferentConfigurationIsReported() throws {
            let directory = try TemporaryDirectory("facade-twice")
            defer { directory.remove() }
            let messages = MessageBox()
            let first = Perf.Configuration(
                directory: directory.url, app: Perf.AppInfo(name: "one"), recording: .enabled)
            #expect(Perf.install(first, environment: [:], clock: SystemClock(), report: messages.append))
            #expect(!Perf.install(first, environment: [:], clock: SystemClock(), report: messages.append))
            #expect(messages.all.isEmpty)
            var second = first
            second.app = Perf.AppInfo(name: "two")
            #expect(!Perf.install(second, environment: [:], clock: SystemClock(), report: messages.append))
            Perf.shutdown()
            #expect(messages.all.count == 1)
            #expect(messages.all.first?.contains("different configuration") == true)
        }

        @Test func watchdogHangReachesTheLedgerWithItsCulprit() throws {
            let queue = DispatchQueue(label: "facade.queue")
            let (events, directory) = try withInstalled { _ in
                var configuration = Perf.HangWatchdog.Configuration()
                configuration.startupGrace = .zero
                let watchdog = Perf.HangWatchdog(monitoring: .queue(queue), configuration: configuration)
                watchdog.start()
                // Bounds need an answered ping before the block: wait for the watchdog to have one.
                _ = pollUntil(seconds: 5) { watchdog.statistics.pingsSent >= 3 }
                let served = DispatchSemaphore(value: 0)
                queue.async {
                    _ = watchdogTestBlockForMilliseconds(400)
                    served.signal()
                }
                served.wait()
                // The episode ends with the first ping served after the block: wait for it.
                _ = pollUntil(seconds: 5) {
                    queue.sync {}
                    return Perf.hangHistograms()["facade.queue"] != nil
                }
                watchdog.stop()
            }
            defer { directory.remove() }
            // Watchdogs of other suites running meanwhile report to the installed Perf too.
            let hangs = events.filter { $0.kind == .hang && $0.name == "facade.queue" }
            try #require(
                hangs.count == 1,
                "\(hangs.map { "lower \($0.lowerMs ?? -1) upper \($0.upperMs ?? -1) stall \($0.stallMs ?? -1) \($0.culprit ?? "-")" })"
            )
            let hang = hangs[0]
            #expect(hang.name == "facade.queue")
            #expect(hang.fatal == false)
            #expect(hang.suppressed == nil)
            let lower = try #require(hang.lowerMs)
            let upper = try #require(hang.upperMs)
            #expect(lower <= 405 && upper >= 395)
            #expect(hang.culprit?.contains("watchdogTestBlockForMilliseconds") == true, "\(hang)")
            #expect(hang.stack?.isEmpty == false)
            #expect(Perf.hangHistograms()["facade.queue"]?.count == 1)
        }

        @Test func keyedSpansSupersedeAndReportUnmatchedEnds() throws {
            let (events, directory) = try withInstalled { _ in
                Perf.begin(key: "conn-1", "facade.keyed", slowMs: nil)
                Perf.begin(key: "conn-1", "facade.keyed", slowMs: nil)
                Perf.end(key: "conn-1", count: 3)
                Perf.end(key: "never-begun")
            }
            defer { directory.remove() }
            let keyed = events.filter { $0.kind == .span && $0.name == "facade.keyed" }
            #expect(keyed.map(\.exit) == ["superseded", "success"])
            #expect(events.contains { $0.kind == .note && $0.extra["reason"] != nil })
            let raw = try String(contentsOf: directory.ledger, encoding: .utf8)
            #expect(!raw.contains("conn-1") && !raw.contains("never-begun"), "keys never reach the ledger")
        }

        /// An end with no open span says where it was called, the one place to look for the lost
        /// begin or the second end; the key stays out of the line.
        @Test func anUnmatchedEndCarriesItsCallSite() throws {
            var endLine: UInt = 0
            let (events, directory) = try withInstalled { _ in
                endLine = #line + 1
                Perf.end(key: "never-begun-site")
            }
            defer { directory.remove() }
            let note = try #require(events.first { $0.kind == .note && $0.name == "perf.unmatchedEnd" })
            #expect(note.site == "PerfTests/FacadeTests.swift:\(endLine)", "\(note)")
            let raw = try String(contentsOf: directory.ledger, encoding: .utf8)
            #expect(raw.contains("\"site\":\"PerfTests/FacadeTests.swift:\(endLine)\""))
            #expect(!raw.contains("never-begun-site"))
        }
    }
}

/// Collects messages a test's install reports.
final class MessageBox: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String] = []

    func append(_ message: String) { lock.withLock { messages.append(message) } }

    var all: [String] { lock.withLock { messages } }
}
