// The OTLP/JSON export: id spelling, 64-bit integers as strings, integer enums, parent links,
// status Error for failed ends and Unset for success, hangs and notes as events, resources per
// session, and a golden file.
import Foundation
import Testing

@testable import Perf
@testable import PerfReport

@Suite struct ExportOTLPTests {
    /// The resources of the fixture's export, with each one's spans.
    static func resources(intervals: Bool = true) throws -> [(attributes: [String: Any], spans: [[String: Any]])] {
        let document = try ExportFixture.json(OTLPExport.render(try ExportFixture.input(intervals: intervals)))
        let resources = try #require(document["resourceSpans"] as? [[String: Any]])
        return try resources.map { resource in
            let attributes = try #require((resource["resource"] as? [String: Any])?["attributes"] as? [[String: Any]])
            let scopes = try #require(resource["scopeSpans"] as? [[String: Any]])
            #expect(scopes.count == 1)
            let scope = try #require(scopes.first?["scope"] as? [String: Any])
            #expect(scope["name"] as? String == "perf" && scope["version"] is String)
            return (values(attributes), try #require(scopes.first?["spans"] as? [[String: Any]]))
        }
    }

    /// `[{key, value: {stringValue: …}}]` as `[key: value]`, checking each value's encoding.
    static func values(_ attributes: [[String: Any]]) -> [String: Any] {
        var values: [String: Any] = [:]
        for attribute in attributes {
            guard let key = attribute["key"] as? String, let value = attribute["value"] as? [String: Any],
                value.count == 1, let entry = value.first
            else {
                Issue.record("malformed attribute \(attribute)")
                continue
            }
            let content = entry.value
            switch entry.key {
            case "stringValue": #expect(content is String)
            case "intValue": #expect((content as? String).flatMap { Int64($0) } != nil, "\(key): int64 as a string")
            case "doubleValue": #expect(content is NSNumber && !(content is String))
            case "boolValue": #expect(content as? Bool != nil)
            default: Issue.record("unknown value type \(entry.key)")
            }
            values[key] = content
        }
        return values
    }

    static func isHex(_ value: Any?, digits: Int) -> Bool {
        guard let text = value as? String, text.count == digits else { return false }
        return text.allSatisfy { "0123456789abcdef".contains($0) } && text != String(repeating: "0", count: digits)
    }

    @Test func fixtureMatchesTheGoldenFile() throws {
        try ExportFixture.expectGolden(OTLPExport.render(try ExportFixture.input()), "golden.otlp.json")
    }

    @Test(arguments: [true, false])
    func idsTimesEnumsAndParentsFollowOTLPJSON(intervals: Bool) throws {
        var traceIDs: Set<String> = []
        for resource in try Self.resources(intervals: intervals) {
            let spans = resource.spans
            let roots = spans.filter { ($0["parentSpanId"] as? String ?? "").isEmpty }
            #expect(roots.count == 1)
            let root = try #require(roots.first)
            #expect(root["name"] as? String == "session")
            let traceID = try #require(root["traceId"] as? String)
            #expect(Self.isHex(traceID, digits: 32))
            #expect(traceIDs.insert(traceID).inserted, "one trace per session")
            let rootStart = try #require(Int64(root["startTimeUnixNano"] as? String ?? ""))
            let rootEnd = try #require(Int64(root["endTimeUnixNano"] as? String ?? ""))
            var spanIDs: Set<String> = []
            for span in spans {
                #expect(span["traceId"] as? String == traceID)
                #expect(Self.isHex(span["spanId"], digits: 16))
                #expect(spanIDs.insert(span["spanId"] as? String ?? "").inserted, "span ids are unique")
                #expect(span["kind"] as? Int == 1, "kind is the integer SPAN_KIND_INTERNAL")
                let start = try #require(Int64(span["startTimeUnixNano"] as? String ?? ""), "start as a string")
                let end = try #require(Int64(span["endTimeUnixNano"] as? String ?? ""), "end as a string")
                #expect(rootStart <= start && start <= end && end <= rootEnd)
                // Unset (absent) or Error: never Ok, which belongs to applications, not instrumentation.
                if let status = span["status"] {
                    let status = try #require(status as? [String: Any])
                    #expect(status["code"] as? Int == 2 && status["message"] is String, "only errors set a status")
                }
                _ = Self.values(span["attributes"] as? [[String: Any]] ?? [])
                if span["name"] as? String != "session" {
                    #expect(span["parentSpanId"] as? String == root["spanId"] as? String)
                }
            }
        }
        #expect(traceIDs.count == 2)
    }

    @Test func failedEndsAndCrashesAreErrorsWithAMessageAndSuccessIsUnset() throws {
        let spans = try Self.resources().flatMap(\.spans)
        func status(_ name: String) -> [String: Any]? {
            spans.first { $0["name"] as? String == name }?["status"] as? [String: Any]
        }
        for name in ["cache.fill", "sync.upload", ExportFixture.hostile] {
            #expect(status(name)?["code"] as? Int == 2, "\(name)")
            #expect((status(name)?["message"] as? String)?.hasPrefix("the span ended as ") == true)
        }
        // The OpenTelemetry specification: instrumentation leaves a success's status Unset.
        for name in ["api.get", "keyed.login", "db.query"] {
            #expect(spans.contains { $0["name"] as? String == name }, "\(name)")
            #expect(status(name) == nil, "\(name): a success has no status (STATUS_CODE_UNSET)")
        }
        let roots = spans.filter { $0["name"] as? String == "session" }
        #expect(roots.count == 2)
        #expect(
            roots.map { ($0["status"] as? [String: Any])?["code"] as? Int } == [2, nil],
            "the crashed session's root is an error, the other's is Unset")
        #expect((roots.first?["status"] as? [String: Any])?["message"] as? String == "the session crashed")
    }

    @Test func resourcesDescribeTheServiceAndSession() throws {
        let resources = try Self.resources()
        let first = resources[0].attributes
        #expect(first["service.name"] as? String == "my\"service" && first["service.version"] as? String == "1.4.0")
        #expect(first["perf.session.id"] as? String == ExportFixture.sessionA)
        #expect(resources[1].attributes["perf.session.id"] as? String == ExportFixture.sessionB)
        #expect(first["host.arch"] as? String == "amd64" && first["os.type"] as? String == "linux")
        #expect(
            first["process.runtime.name"] as? String == "swift" && first["process.runtime.version"] as? String == "6.3")
        #expect(first["os.description"] as? String == "Debian GNU/Linux 12 (bookworm)")
        #expect(first["host.name"] == nil, "the report does not know the host's name")
    }

    @Test func hangsAndNotesAreEventsOnTheRoot() throws {
        let spans = try Self.resources()[0].spans
        let root = try #require(spans.first { $0["name"] as? String == "session" })
        let events = try #require(root["events"] as? [[String: Any]])
        #expect(
            events.compactMap { $0["name"] as? String } == ["socket.reconnect", "overdue sync.upload", "hang main"])
        let hang = try #require(events.last)
        #expect(hang["timeUnixNano"] as? String == String((ExportFixture.epochA + 200) * 1_000_000), "when it began")
        let attributes = Self.values(try #require(hang["attributes"] as? [[String: Any]]))
        #expect(attributes["perf.hang.culprit"] as? String == "MyService.Feed.parse()")
        #expect(attributes["perf.hang.fatal"] as? Bool == true && attributes["thread.id"] as? String == "4242")
        #expect(attributes["perf.hang.duration_ms"] as? Double == 300)
        let child = try #require(spans.first { $0["name"] as? String == "db.query" })
        let childAttributes = Self.values(try #require(child["attributes"] as? [[String: Any]]))
        #expect(
            childAttributes["thread.name"] as? String == "main" && childAttributes["perf.budget_ms"] as? Double == 50)
    }

    @Test func ledgerSpansOutsideTheRingAreSpansWithTheirSite() throws {
        let spans = try Self.resources(intervals: false)[0].spans
        #expect(spans.map { $0["name"] as? String ?? "" } == ["session", "boot", "api.get"])
        let apiGet = Self.values(try #require(spans[2]["attributes"] as? [[String: Any]]))
        #expect(apiGet["perf.source"] as? String == "ledger" && apiGet["perf.over_budget"] as? Bool == true)
        #expect(apiGet["code.filepath"] as? String == "MyService/API.swift" && apiGet["code.lineno"] as? String == "88")
    }

    @Test func idsAreDeterministicAndDistinct() {
        #expect(ExportIDs.traceID(session: "x") == ExportIDs.traceID(session: "x"))
        #expect(ExportIDs.traceID(session: "x") != ExportIDs.traceID(session: "y"))
        let ids = (0..<1_000).map { ExportIDs.spanID(session: "x", index: $0) }
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy { Self.isHex($0, digits: 16) })
        #expect(ExportIDs.hex(0) == "0000000000000000" && ExportIDs.nonZero(0) == 1)
    }
}
