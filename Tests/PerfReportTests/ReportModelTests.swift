// The typed report model: the contract with the builder (every key written is one the model
// knows), strict and lenient readings with key-path messages, open enums, and the payload
// decoder agreeing with JSONDecoder.
import Foundation
import PerfCore
import PerfTestSupport
import Testing

@testable import Perf
@testable import PerfReport

@Suite struct ReportModelTests {
    /// Every key path of a JSON value with a non-null value (`spans.api.get.count`,
    /// `sessions[2].id`), and separately those whose value is null.
    static func keyPaths(_ value: Any, _ path: String = "", into paths: inout Set<String>, nulls: inout Set<String>) {
        if let object = value as? [String: Any] {
            for (key, member) in object {
                let child = path.isEmpty ? key : path + "." + key
                if member is NSNull {
                    nulls.insert(child)
                } else {
                    paths.insert(child)
                    keyPaths(member, child, into: &paths, nulls: &nulls)
                }
            }
        } else if let array = value as? [Any] {
            for (index, element) in array.enumerated() {
                keyPaths(element, path + "[\(index)]", into: &paths, nulls: &nulls)
            }
        }
    }

    static func keyPaths(_ bytes: [UInt8]) throws -> (paths: Set<String>, nulls: Set<String>) {
        var paths: Set<String> = []
        var nulls: Set<String> = []
        keyPaths(try JSONSerialization.jsonObject(with: Data(bytes)), into: &paths, nulls: &nulls)
        return (paths, nulls)
    }

    /// A key path with indices and the names of open maps (spans, hang targets, pressure
    /// figures) replaced by placeholders: what the path means, not where it is.
    static func shape(_ path: String, of report: PerformanceReport) -> String {
        var text = path.replacingOccurrences(of: #"\[\d+\]"#, with: "[]", options: .regularExpression)
        // Names may hold dots: the longest known name that follows the map's key wins.
        for (map, names) in [("spans", Set(report.spans.keys)), ("hangs.targets", Set(report.hangs.targets.keys))] {
            for name in names.sorted(by: { $0.count > $1.count }) where text.hasPrefix(map + "." + name) {
                let rest = text.dropFirst(map.count + 1 + name.count)
                guard rest.isEmpty || rest.hasPrefix(".") else { continue }
                text = map + ".*" + rest
                break
            }
        }
        if let range = text.range(of: "process.pressureTotalUs.") { text = text[..<range.upperBound] + "*" }
        return text
    }

    /// The contract between the writer and the model: the fixture directory built in full, with
    /// a cap that truncates every section, and with the smallest cap. Each report decodes
    /// strictly; re-encoding the model gives back every key the builder wrote (the full one,
    /// exactly those); and every key the builder writes as `null` is one some build writes
    /// with a value, so the model knows it too.
    @Test func everyKeyTheBuilderWritesIsOneTheModelKnows() throws {
        var shapesWithValues: Set<String> = []
        var nullShapes: Set<String> = []
        for cap in [2 << 20, 6 * 1024, 4 * 1024] {
            let bytes = try ReportBuilder(directory: ReportFixture.data, capBytes: cap).build()
            let report = try PerformanceReport(bytes: bytes, path: "built.json")
            #expect(report.problems.isEmpty)
            let written = try Self.keyPaths(bytes)
            let known = try Self.keyPaths([UInt8](JSONEncoder().encode(report))).paths
            let dropped = written.paths.subtracting(known)
            #expect(dropped.isEmpty, "cap \(cap): keys the model does not carry: \(dropped.sorted())")
            if cap == 2 << 20 {
                #expect(report.truncated == nil)
                let invented = known.subtracting(written.paths)
                #expect(invented.isEmpty, "keys the model writes that the builder does not: \(invented.sorted())")
            } else {
                #expect(report.truncated != nil, "cap \(cap) truncates")
            }
            shapesWithValues.formUnion(written.paths.map { Self.shape($0, of: report) })
            nullShapes.formUnion(written.nulls.map { Self.shape($0, of: report) })
        }
        // Ledger lines keep keys outside the schema in `extra`, so a key the model dropped would
        // still re-encode: the model's fixed keys must be the ledger writer's.
        let ledgerKeys = Set(LedgerEncoder.FixedKey.allCases.map(\.name))
        #expect(Set(PerformanceReport.Event.CodingKeys.allCases.map(\.stringValue)) == ledgerKeys)
        let unknownNulls = nullShapes.subtracting(shapesWithValues)
        #expect(unknownNulls.isEmpty, "keys only ever written as null: \(unknownNulls.sorted())")
        // The shapes the fixture covers, so a builder change that stops writing one is noticed.
        for shape in [
            "spans.*.histogram.buckets", "hangs.targets.*", "intervals[].spans[].budgetMs", "sessions[].pid",
            "ledger.events[].stuckFrames", "diagnostics[].process.pressureTotalUs.*", "truncated.intervalsOmitted",
            "input.invalidPayloads",
        ] {
            #expect(shapesWithValues.contains(shape), "\(shape)")
        }
    }

    @Test func theGoldenReportRoundTripsThroughTheModel() throws {
        let bytes = try [UInt8](Data(contentsOf: ReportFixture.golden))
        let report = try PerformanceReport(bytes: bytes, path: "golden.json")
        #expect(try PerformanceReport(bytes: [UInt8](JSONEncoder().encode(report)), path: "again.json") == report)
        #expect(report.sessions.map(\.status) == [.active, .terminated, .crashed])
        #expect(report.spans["db.query"]?.source == .ledger)
        #expect(report.spans["api.get"]?.source == .histogram)
        #expect(report.intervals.first?.flightRecorder.spans.contains { $0.exit == .failure } == true)
        #expect(report.ledger.events.first { $0.kind == .session && $0.name == "crashed" }?.extra["pid"] == .int(4242))
        #expect(report.ledger.events.contains { $0.exit == .orphaned })
        #expect(report.generatedAt?.description == "2026-12-02T14:10:00.000Z")
    }

    @Test(arguments: [
        (#""spans":{"db.get":{"count":"many"}}"#, #""spans.db.get.count": expected a number"#),
        (#""spans":{"db.get":{"count":1.5}}"#, #""spans.db.get.count": expected a whole number within range"#),
        (#""spans":{"db.get":[]}"#, #""spans.db.get": expected an object"#),
        (#""spans":{},"sessions":[{"id":"a"},{"status":"active"}]"#, #""sessions[1].id": missing"#),
        (
            #""spans":{},"generatedAt":"yesterday""#,
            #""generatedAt": expected an ISO-8601 UTC time such as 2026-12-02T13:00:00.000Z"#
        ),
        (
            #""spans":{},"hangs":{"culprits":[{"culprit":"f","maxMs":null,"count":true}]}"#,
            #""hangs.culprits[0].count": expected a number"#
        ),
        (
            #""spans":{},"ledger":{"events":[{"v":1,"ts":"2026-12-02T12:00:00.000Z","kind":"note","name":"n"}]}"#,
            #""ledger.events[0].session": missing"#
        ),
        (
            #""spans":{"s":{"histogram":{"buckets":[[1,2]],"count":3,"lo":9,"max":0,"min":0,"sub":64,"sum":0,"v":1}}}"#,
            #""spans.s.histogram.count": count 3 differs from the 2 values in the buckets"#
        ),
    ])
    func aStrictReadingNamesTheKeyPath(members: String, problem: String) {
        let sessions = members.contains(#""sessions""#) ? "" : #""sessions":[],"#
        let text = #"{"schema":"perf-report","schemaVersion":1,"# + sessions + members + "}"
        #expect(throws: Perf.ReportError(.invalidReport, path: "x.json", problem)) {
            try PerformanceReport(bytes: Array(text.utf8), path: "x.json")
        }
    }

    @Test func aLenientReadingLeavesOutWhatIsWrongAndListsIt() throws {
        let text = #"""
            {"schema":"perf-report","schemaVersion":1,"generatedAt":42,
             "spans":{"db.get":{"count":"many","p95Ms":12.5},"ok":{"count":3}},
             "sessions":[{"id":"a","status":"crashed"},{"status":"active"}],
             "ledger":{"events":[{"v":1,"ts":"nope","kind":"note","name":"n","session":"a"}],"tornTail":1}}
            """#
        let report = try PerformanceReport(bytes: Array(text.utf8), path: "x.json", reading: .lenient)
        #expect(report.spans["db.get"]?.count == 0 && report.spans["db.get"]?.p95Ms == 12.5)
        #expect(report.spans["ok"]?.count == 3)
        #expect(report.sessions.map(\.id) == ["a"])
        #expect(report.generatedAt == nil)
        #expect(report.ledger.events.isEmpty && report.ledger.tornTail == 1)
        #expect(
            Set(report.problems.map(\.description)) == [
                #""generatedAt": expected a string"#, #""spans.db.get.count": expected a number"#,
                #""sessions[1].id": missing"#,
                #""ledger.events[0].ts": expected an ISO-8601 UTC time such as 2026-12-02T13:00:00.000Z"#,
            ])
        // The same bytes read strictly: the first problem rejects them.
        #expect(throws: Perf.ReportError.self) { try PerformanceReport(bytes: Array(text.utf8), path: "x.json") }
        // The exporters read leniently and say what they left out.
        #expect(try ExportInput(bytes: Array(text.utf8), path: "x.json").problems.count == 4)
    }

    @Test func documentProblemsKeepTheirMessagesInBothReadings() {
        for reading in [PerformanceReport.Reading.strict, .lenient] {
            for (text, problem) in [
                ("", "the file is empty"), ("{", "not valid JSON (truncated or corrupt)"),
                ("[]", "not a performance report (not a JSON object)"),
                (#"{"schema":1}"#, #"not a performance report (schema is not "perf-report")"#),
                (#"{"schema":"perf-report","schemaVersion":1.5}"#, #"missing or invalid "schemaVersion""#),
                (
                    #"{"schema":"perf-report","schemaVersion":1,"spans":{}}"#,
                    #""sessions" is missing or has the wrong type"#
                ),
            ] {
                #expect(throws: Perf.ReportError(.invalidReport, path: "x.json", problem)) {
                    try PerformanceReport(bytes: Array(text.utf8), path: "x.json", reading: reading)
                }
            }
            let newer = #"{"schema":"perf-report","schemaVersion":2,"spans":{},"sessions":[]}"#
            #expect {
                try PerformanceReport(bytes: Array(newer.utf8), path: "x.json", reading: reading)
            } throws: { ($0 as? Perf.ReportError)?.code == .newerSchema }
        }
    }

    @Test func unknownKeysAreIgnoredAndUnknownValuesKept() throws {
        let text = #"""
            {"schema":"perf-report","schemaVersion":1,"futureSection":{"x":[1,2]},
             "spans":{"s":{"count":1,"source":"sampled","newStatistic":3}},
             "sessions":[{"id":"a","status":"hibernating"}],
             "intervals":[{"session":"a","epochUnixMs":0,"spans":[{"name":"x","startNs":0,"durationNs":1,"exit":"vanished"}]}],
             "ledger":{"events":[{"v":1,"ts":"2026-12-02T12:00:00.000Z","kind":"teleport","name":"n","session":"a","exit":"vanished","mood":"calm"}]}}
            """#
        let report = try PerformanceReport(bytes: Array(text.utf8), path: "x.json")
        #expect(report.spans["s"]?.source == .other("sampled"))
        #expect(report.sessions.first?.status == .other("hibernating"))
        #expect(report.intervals.first?.flightRecorder.spans.first?.exit == .other("vanished"))
        let event = try #require(report.ledger.events.first)
        #expect(event.kind == .other("teleport") && event.exit == "vanished")
        #expect(event.extra == ["mood": .string("calm")])
        let again = String(decoding: try JSONEncoder().encode(report), as: UTF8.self)
        for written in [#""source":"sampled""#, #""status":"hibernating""#, #""kind":"teleport""#, #""mood":"calm""#] {
            #expect(again.contains(written), "\(written) is written back unchanged")
        }
        // An `other` equal to a known value is that value.
        #expect(PerformanceReport.Session.Status.other("crashed") == .crashed)
        #expect(PerformanceReport.Session.Status(rawValue: "crashed") == .crashed)
        #expect(PerformanceReport.Exit(.orphaned) == .orphaned && PerformanceReport.Exit.expired.isError)
    }

    @Test func theSummaryCarriesStatusesAndSourcesAsEnums() throws {
        let summary = try ReportSummary(contentsOf: ReportFixture.golden)
        #expect(summary.sessions.map(\.status) == [.active, .terminated, .crashed])
        #expect(summary.spans.first { $0.name == "db.query" }?.source == .ledger)
        let figures = try ReportFigures(contentsOf: ReportFixture.golden)
        #expect(figures.environment["cpuModel"] == "Intel(R) Xeon(R) Gold 6338")
        #expect(figures.ledger["events"] == 18 && figures.hangs["fatal"] == 1)
    }

    @Test func googleBenchmarkFilesAreReadFromBytes() throws {
        let figures = try ReportFigures(googleBenchmark: Array(GoogleBenchmarkInputTests.sample.utf8), path: "b.json")
        #expect(figures.spans["BM_Spin"]?.values[.p50] == 2.5)
        #expect(
            throws: Perf.ReportError(
                .invalidReport, path: "b.json", "not valid Google Benchmark JSON: not valid JSON (truncated or corrupt)"
            )
        ) {
            try ReportFigures(googleBenchmark: Array("{".utf8), path: "b.json")
        }
        #expect(
            throws: Perf.ReportError(
                .invalidReport, path: "b.json", "not valid Google Benchmark JSON: the top level is not an object")
        ) {
            try ReportFigures(googleBenchmark: Array("[]".utf8), path: "b.json")
        }
    }

    // MARK: The payload decoder

    /// Decodes `bytes` as a payload with JSONDecoder and with the lazy decoder.
    static func bothDecoders(_ bytes: [UInt8]) -> (
        json: DiagnosticSnapshot?, lazy: Result<DiagnosticSnapshot, any Error>
    ) {
        let json = try? ReportDecodingContext(reading: .strict).decoder().decode(
            DiagnosticSnapshot.self, from: Data(bytes))
        let lazy = Result {
            try ReportDecodingContext(reading: .strict).lazyDecoder().decode(DiagnosticSnapshot.self, from: bytes)
        }
        return (json, lazy)
    }

    @Test func thePayloadDecoderReadsWhatJSONDecoderReads() throws {
        let folder = ReportFixture.data.appendingPathComponent(DiagnosticFiles.directoryName)
        var compared = 0
        for name in try DiagnosticFiles.list(folder: folder.path) {
            let bytes = try [UInt8](Data(contentsOf: folder.appendingPathComponent(name)))
            let (json, lazy) = Self.bothDecoders(bytes)
            #expect(json == (try? lazy.get()), "\(name)")
            compared += json == nil ? 0 : 1
        }
        #expect(compared >= 3)
        // A payload with intervals and escapes in every string position.
        var histogram = Perf.Histogram()
        for value in [1_000, 50_000, 7_000_000] { histogram.record(nanos: UInt64(value)) }
        let intervals = SpanIntervals(
            capacity: 8, recorded: 2, epochUnixMs: 1_796_216_400_000, threads: [7: "wörker \"q\"\n"],
            spans: [
                .init(
                    name: "a\u{1F600}\\b", threadID: 7, startNanos: 5, durationNanos: 9, exit: .expired, budgetMs: 0.5)
            ])
        let snapshot = DiagnosticSnapshot(
            session: "s\t1", takenAtMs: 1_796_216_400_123, reason: "on-demand", app: Perf.AppInfo(name: "a\u{0}b"),
            host: .current(), process: ProcessFigures(), spans: ["x\u{7F}": histogram], hangs: ["main": histogram],
            intervals: intervals)
        let (json, lazy) = Self.bothDecoders(snapshot.jsonBytes)
        #expect(json == snapshot)
        #expect(try lazy.get() == snapshot)
    }

    @Test func thePayloadDecoderAcceptsJSONsNumbersAndEscapesOnly() throws {
        struct Values: Decodable, Equatable {
            var int: Int64, unsigned: UInt64, double: Double, text: String, flag: Bool, small: Int32?, list: [Float]
        }
        let good =
            #"{"int":-9223372036854775808,"unsigned":1e3,"double":-0.5e-3,"text":"\u00e9\ud83d\ude00\/","flag":false,"small":null,"list":[2.0,1]}"#
        let decoded = try LazyJSONDecoder().decode(Values.self, from: Array(good.utf8))
        #expect(
            decoded
                == Values(
                    int: .min, unsigned: 1000, double: -0.0005, text: "é😀/", flag: false, small: nil, list: [2, 1]))
        #expect(decoded == (try JSONDecoder().decode(Values.self, from: Data(good.utf8))))
        for bad in [
            "", "{", #"{"a":1,}"#, "[1 2]", "01", "1.", "-", "1e", "tru", #"["\x"]"#, #"["\u12"]"#, #"{"a"}"#, "[1]]",
            "nul", "[1,,]", "[,]", "[+1]", "[.5]", "[01]", "[1-2]",
            String(repeating: "[", count: 200) + String(repeating: "]", count: 200),
        ] {
            #expect(throws: DecodingError.self, "\(bad)") {
                try LazyJSONDecoder().decode([Int].self, from: Array(bad.utf8))
            }
        }
        // Unlike JSONDecoder, a trailing comma is refused, as by every JSON reader of the
        // package; as with JSONDecoder, a raw control character in a string is refused.
        #expect(throws: DecodingError.self) { try LazyJSONDecoder().decode([Int].self, from: Array("[1,]".utf8)) }
        #expect(throws: DecodingError.self) {
            try LazyJSONDecoder().decode([String].self, from: Array("[\"a\u{1}\"]".utf8))
        }
        struct Probe: Decodable {
            var int: Int64?, unsigned: UInt64?, text: String?, list: [Float]?
        }
        for (text, path, message) in [
            (#"{"int":1.5}"#, "v.int", "expected a whole number within range, found 1.5"),
            (#"{"int":"1"}"#, "v.int", "expected a number"), (#"{"list":[1,"x"]}"#, "v.list[1]", "expected a number"),
            (#"{"unsigned":-1}"#, "v.unsigned", "expected a whole number within range, found -1"),
            (#"{"text":"\ud800"}"#, "v.text", "invalid string"), (#"{"list":{}}"#, "v.list", "expected an array"),
        ] {
            do {
                let bytes = Array(#"{"v":"#.utf8) + Array(text.utf8) + [UInt8(ascii: "}")]
                _ = try LazyJSONDecoder().decode([String: Probe].self, from: bytes)
                Issue.record("\(text) was accepted")
            } catch {
                let problem = ReportDecodingError(error, at: [], expecting: Probe.self).problem
                #expect(problem == DecodingProblem(path: path, message: message), "\(text)")
            }
        }
    }
}
