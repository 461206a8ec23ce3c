// The README's quick start and watchdog snippets, compiled (and run against a temporary
// directory) so the documentation cannot drift from the API.
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
