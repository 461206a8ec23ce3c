// The README's quick start, span-name and watchdog snippets, compiled (and run against a
// temporary directory), and its quoted messages and defaults checked, so the documentation cannot
// drift from the API.
import Foundation
import JournalKit
import PerfTestSupport
import Testing

@testable import Perf

struct ReadmeRequest { var url: URL }
struct ReadmeDatabase { func load(_ id: Int) throws -> String { "user \(id)" } }

extension PerfGlobalStateTests {
    @Suite struct ReadmeExamplesTests {
        @Test func quickStartAsWritten() throws {
            let directory = try TemporaryDirectory("readme")
            defer { directory.remove() }
            let request = ReadmeRequest(url: URL(string: "https://api.example.com/v1/threads?cursor=9")!)
            let items = [1, 2, 3]
            let db = ReadmeDatabase()
            let id = 7
            let connectionID = "connection-42"

            Perf.install(Perf.Configuration(
                directory: directory.url,
                app: Perf.AppInfo(name: "myservice", version: "1.4.0", build: "812"),
                recording: .enabled))

            let span = Perf.begin("api.get", slowMs: 0)
            span.end(detail: request.url.absoluteString, count: items.count)
            let user = try Perf.measure("db.loadUser", slowMs: 50) { try db.load(id) }
            Perf.begin(key: connectionID, "socket.session", slowMs: nil)
            Perf.end(key: connectionID)
            Perf.note("socket.reconnect")
            Perf.markReady()
            let serviceQueue = DispatchQueue(label: "readme.service")
            let watchdog = Perf.HangWatchdog(monitoring: .queue(serviceQueue))
            watchdog.start()
            watchdog.stop()
            Perf.shutdown()

            #expect(user == "user 7")
            let events = try LedgerReader(directory: directory.url).readAll().events
            #expect(events.contains { $0.name == "api.get" && $0.detail == "/v1/threads" && $0.count == 3 })
            #expect(events.contains { $0.name == "socket.session" && $0.exit == "success" })
        }

        @Test func dynamicNamesAsWritten() throws {
            let directory = try TemporaryDirectory("readme-names")
            defer { directory.remove() }
            let endpoint = "https://api.example.com/v1/threads?cursor=9"
            let uploadID = 17
            let fileName = "photo.jpg"
            let byteCount = 2048
            Perf.install(Perf.Configuration(
                directory: directory.url, app: Perf.AppInfo(name: "myservice"), recording: .enabled))

            let span = Perf.begin("api.fetch", slowMs: 0)
            span.end(detail: endpoint)
            Perf.begin(key: "upload-\(uploadID)", "upload", slowMs: nil)
            Perf.end(key: "upload-\(uploadID)", detail: fileName, count: byteCount)
            Perf.shutdown()

            let events = try LedgerReader(directory: directory.url).readAll().events
            #expect(events.contains { $0.name == "api.fetch" && $0.detail == "/v1/threads" })
            #expect(events.contains { $0.name == "upload" && $0.detail == "photo.jpg" && $0.count == 2048 })
            let raw = try String(contentsOf: directory.ledger, encoding: .utf8)
            #expect(!raw.contains("upload-17"), "keys are never written")
        }

        @Test func watchdogConfigurationAsWritten() {
            var configuration = Perf.HangWatchdog.Configuration()
            configuration.hangThreshold = .milliseconds(500)
            configuration.fatalAfter = .seconds(20)
            configuration.onFatal = { _ in abort() }
            let watchdog = Perf.HangWatchdog(monitoring: .main, configuration: configuration)
            #expect(watchdog.configuration.hangThreshold == .milliseconds(500))
            #expect(watchdog.configuration.fatalAfter == .seconds(20))
        }

        /// The watchdog table's defaults are the configuration's.
        @Test func watchdogDefaultsAsDocumented() throws {
            let readme = try Self.readme()
            let defaults = Perf.HangWatchdog.Configuration()
            let rows: [(String, String)] = [
                ("interval", Self.text(defaults.interval)), ("hitchThreshold", Self.text(defaults.hitchThreshold)),
                ("hangThreshold", Self.text(defaults.hangThreshold)),
                ("startupGrace", Self.text(defaults.startupGrace)),
                ("firstSampleAfter", Self.text(defaults.firstSampleAfter)),
                ("sampleInterval", Self.text(defaults.sampleInterval)), ("maxSamples", "\(defaults.maxSamples)"),
                ("ongoingAfter", Self.text(defaults.ongoingAfter)),
                ("fatalAfter", defaults.fatalAfter == nil ? "`nil`" : "?"),
                ("onFatal", defaults.onFatal == nil ? "`nil`" : "?"),
                ("suppressWhenDebugging", "`\(defaults.suppressWhenDebugging)`"),
                ("culpritCooldown", Self.text(defaults.culpritCooldown)),
                ("onEpisode", defaults.onEpisode == nil ? "`nil`" : "?"),
                ("systemdWatchdog", defaults.systemdWatchdog == nil ? "`nil`" : "?"),
            ]
            for (field, value) in rows {
                #expect(readme.contains("| `\(field)` | \(value) |"), "README's row for \(field) should say \(value)")
            }
        }

        /// The messages the README quotes are the ones Perf prints.
        @Test func messagesAsQuoted() throws {
            let readme = try Self.readme()
            let warning = try #require(
                InstallPolicy.recordingDecision(.auto, environment: ["PERF_RECORDING": "enable"], debugBuild: false)
                    .warning)
            #expect(readme.contains("\n" + warning + "\n"))
            let directory = DataDirectory.Failure(
                directory: "/proc/x/perf", step: .create, path: "/proc/x", errno: ENOENT)
            #expect(readme.contains("\n" + directory.report + "\n"))
        }

        static func readme() throws -> String {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            return try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        }

        /// A duration as the README writes it: `50 ms`, `1 s`, `0`.
        static func text(_ duration: Duration) -> String {
            let (seconds, attoseconds) = duration.components
            if seconds == 0 && attoseconds == 0 { return "0" }
            if attoseconds == 0 { return "\(seconds) s" }
            return "\(seconds * 1000 + attoseconds / 1_000_000_000_000_000) ms"
        }

        @Test func journalAsWritten() throws {
            let directory = try TemporaryDirectory("readme-journal")
            defer { directory.remove() }
            let url = directory.url.appendingPathComponent("journal")
            let header = Data("header".utf8)
            let data = Data("entry".utf8)
            let journal = try Journal(directory: url, configuration: .init(
                byteBudget: 8 << 20, durability: .processDeath, segmentHeader: header))
            try journal.append(data)
            journal.close()
            let recovery = try Journal.recover(directory: url)
            #expect(recovery.entries == [data])
            #expect(recovery.headers == [header])
            #expect(!recovery.tornTail && !recovery.droppedOlderEntries)
        }
    }
}
