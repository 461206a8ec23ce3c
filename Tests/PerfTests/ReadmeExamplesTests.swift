// The README's quick start, compiled (as a newcomer pastes it: as main.swift and inside a function)
// and its manifest checked; the snippets of the README and of the articles it links (span names,
// the watchdog, JournalKit) run against a temporary directory, and the articles' quoted messages
// and defaults checked, so the documentation cannot drift from the API.
import Foundation
import JournalKit
import PerfTestSupport
import Testing

@testable import Perf

/// The quick start compiles wherever a newcomer pastes it, and its manifest names Perf the way
/// SwiftPM does. (Run by scripts/validate-quickstart.sh in a fresh package.)
@Suite struct ReadmeQuickStartCompileTests {
    static let heading = "## Quick start"

    /// The quick start's program: the Swift block that imports Perf.
    static func program() throws -> String {
        try #require(MarkdownSection(heading).swift.first { $0.components(separatedBy: "\n").contains("import Perf") })
    }

    /// A top-level `let span` in main.swift is a global, and a global span cannot be ended.
    @Test func asMainSwift() throws {
        let result = try SwiftSnippetCompiler.compile(Self.program(), as: .mainFile)
        #expect(result.compiledCleanly, "\(ChildProcess.describe(result.status)):\n\(result.output)")
    }

    @Test func insideAFunction() throws {
        let result = try SwiftSnippetCompiler.compile(SwiftSnippetCompiler.insideAFunction(Self.program()))
        #expect(result.compiledCleanly, "\(ChildProcess.describe(result.status)):\n\(result.output)")
    }

    /// A dependency's identity is the last component of its path or URL (without `.git`), and
    /// `.product(package:)` must be that identity, or SwiftPM reports an unknown package.
    @Test func manifestNamesPerfByItsIdentity() throws {
        let swift = try MarkdownSection(Self.heading).swift
        let manifest = try #require(swift.first { $0.contains("import PackageDescription") }, "a whole Package.swift")
        let path = try #require(Self.quoted(after: ".package(path: ", in: manifest))
        let identity = try #require(Self.quoted(after: ".product(name: \"Perf\", package: ", in: manifest))
        #expect(identity == URL(fileURLWithPath: path).lastPathComponent)
        let remote = try #require(swift.first { $0.contains(".package(url: ") }, "the URL form")
        let url = try #require(Self.quoted(after: ".package(url: ", in: remote))
        let urlIdentity = URL(string: url)!.deletingPathExtension().lastPathComponent
        #expect(remote.contains("identity: \(urlIdentity)"), "the URL form names its identity, \(urlIdentity)")
    }

    /// The string literal that follows `prefix` in `text`.
    static func quoted(after prefix: String, in text: String) -> String? {
        guard let start = text.range(of: prefix + "\"")?.upperBound,
            let end = text[start...].firstIndex(of: "\"")
        else { return nil }
        return String(text[start..<end])
    }
}

extension PerfGlobalStateTests {
    @Suite struct ReadmeExamplesTests {
        /// The quick start's program with a temporary directory in its configuration.
        @Test func quickStartAsWritten() throws {
            let directory = try TemporaryDirectory("readme")
            defer { directory.remove() }

            Perf.install(
                Perf.Configuration(
                    directory: directory.url,
                    app: Perf.AppInfo(name: "myservice", version: "1.4.0", build: "812"),
                    recording: .enabled))

            func handle(url: String, items: [Int]) {
                let span = Perf.begin("api.get", slowMs: 0)
                span.end(detail: url, count: items.count)
            }
            handle(url: "https://api.example.com/v1/threads?cursor=9", items: [1, 2, 3])
            let user = Perf.measure("db.loadUser", slowMs: 50) { "user 7" }
            Perf.begin(key: "connection-42", "socket.session", slowMs: nil)
            Perf.end(key: "connection-42")
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
            Perf.install(
                Perf.Configuration(
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

        /// The watchdog article's table of defaults is the configuration's.
        @Test func watchdogDefaultsAsDocumented() throws {
            let article = try PackageDocument.text(PackageDocument.perfArticle("WatchingForHangs"))
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
                #expect(
                    article.contains("| `\(field)` | \(value) |"),
                    "WatchingForHangs.md's row for \(field) should say \(value)")
            }
        }

        /// The messages the recording article quotes are the ones Perf prints.
        @Test func messagesAsQuoted() throws {
            let article = try PackageDocument.text(PackageDocument.perfArticle("RecordingAndFiles"))
            let warning = try #require(
                InstallPolicy.recordingDecision(.auto, environment: ["PERF_RECORDING": "enable"], debugBuild: false)
                    .warning)
            #expect(article.contains("\n" + warning + "\n"))
            let directory = DataDirectory.Failure(
                directory: "/proc/x/perf", step: .create, path: "/proc/x", errno: ENOENT)
            #expect(article.contains("\n" + directory.report + "\n"))
        }

        /// A duration as the watchdog article writes it: `50 ms`, `1 s`, `0`.
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
            let journal = try Journal(
                directory: url,
                configuration: .init(
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
