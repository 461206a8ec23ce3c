// Reports built in code for the html export tests: sessions, threads, hundreds of flight-recorder
// spans, slow and failed ones, hangs with culprits, notes and diagnostics, in the report format
// ARCHITECTURE.md shows, plus a checker of the page's tag structure.
import Foundation
import PerfCore
import PerfTestSupport
import Testing

@testable import Perf
@testable import PerfReport

enum HTMLFixture {
    /// 2026-12-02T13:00:00.000Z.
    static let epochMs: Int64 = 1_796_216_400_000

    struct Shape {
        var spansPerSession = 300
        var intervals = true
        /// Replaces span, thread, culprit and session names with hostile strings.
        var hostile = false
    }

    /// Span names and budgets (nil: no budget), drawn in turn.
    static let spanKinds: [(String, Double?)] = [
        ("api.get", 20), ("db.query", 5), ("render.page", nil), ("cache.lookup", 1),
    ]

    static let hostileNames = [
        "<script>alert(1)</script>", "\"&'<>", "http://evil.example/x.png", "url(https://evil.example/f.woff)",
        "@import 'https://evil.example/s.css'", "<img src=x onerror=alert(1)>", String(repeating: "long·", count: 4000),
        "ctl\u{1}\u{7}\u{1B}[31m"
            + String(
                String.UnicodeScalarView([0x7F, 0x85, 0x9F, 0xFDD0, 0xFFFE, 0x1FFFF].compactMap(Unicode.Scalar.init))),
        "</svg></title><script>",
    ]

    /// The report as a JSON object.
    static func report(_ shape: Shape = Shape()) -> [String: Any] {
        var random = SeededRandom(seed: 20_261_202)
        var hostileIndex = 0
        func name(_ plain: String) -> String {
            guard shape.hostile else { return plain }
            defer { hostileIndex += 1 }
            return hostileNames[hostileIndex % hostileNames.count] + plain
        }
        let sessions = [(name("a1b2c3d4e5f60718"), "crashed"), (name("0f1e2d3c4b5a6978"), "terminated")]
        let spanNames = spanKinds.map { (name($0.0), $0.1) }
        var histograms: [String: LatencyHistogram] = [:]
        var overBudget: [String: Int] = [:]
        var events: [[String: Any]] = []
        var blocks: [[String: Any]] = []
        for (index, (session, status)) in sessions.enumerated() {
            let sessionStart = epochMs + Int64(index) * 3_600_000
            events.append(["v": 1, "kind": "session", "name": "start", "session": session, "ts": ts(sessionStart)])
            let threads: [(Int64, String)] = [
                (4242 + Int64(index) * 1000, "main"), (4243 + Int64(index) * 1000, name("worker-1")),
                (4250 + Int64(index) * 1000, "io"),
            ]
            var cursors = threads.map { _ in Int64(1_000_000) }
            var spans: [[String: Any]] = []
            for number in 0..<shape.spansPerSession {
                let lane = number % threads.count
                let (spanName, budget) = spanNames[number % spanNames.count]
                let durationNs = Int64(Double.random(in: 0.2...1.6, using: &random) * (budget ?? 8) * 1e6)
                let exit = number % 23 == 7 ? "failure" : (number % 41 == 11 ? "cancelled" : "success")
                var span: [String: Any] = [
                    "name": spanName, "tid": threads[lane].0, "startNs": cursors[lane], "durationNs": durationNs,
                    "exit": exit,
                ]
                if let budget { span["budgetMs"] = budget }
                spans.append(span)
                histograms[spanName, default: LatencyHistogram()].record(nanos: UInt64(durationNs))
                if let budget, Double(durationNs) > budget * 1e6 {
                    overBudget[spanName, default: 0] += 1
                    events.append([
                        "v": 1, "kind": "span", "name": spanName, "session": session,
                        "ts": ts(sessionStart + (cursors[lane] + durationNs) / 1_000_000),
                        "durationMs": Double(durationNs) / 1e6, "budgetMs": budget, "exit": exit,
                        "site": "Service/\(spanName).swift:\(10 + number % 90)",
                        "detail": "/v1/\(spanName)/\(number)",
                    ])
                }
                // A nested child now and then, so lanes need a second row.
                if number % 10 == 0 {
                    spans.append([
                        "name": spanNames[1].0, "tid": threads[lane].0, "startNs": cursors[lane] + durationNs / 4,
                        "durationNs": durationNs / 3, "exit": "success", "budgetMs": 5,
                    ])
                    histograms[spanNames[1].0, default: LatencyHistogram()].record(nanos: UInt64(durationNs / 3))
                }
                cursors[lane] += durationNs + Int64.random(in: 100_000...3_000_000, using: &random)
            }
            let span = cursors.max()! - 1_000_000
            let hang = (at: sessionStart + span / 2_000_000, ms: 712.5 - Double(index) * 300)
            events.append([
                "v": 1, "kind": "hang", "name": "main", "session": session, "ts": ts(hang.at), "durationMs": hang.ms,
                "lowerMs": hang.ms - 20, "upperMs": hang.ms + 20, "fatal": status == "crashed",
                "thread": "\(threads[1].1) (tid \(threads[1].0), state R)",
                "culprit": name("static Service.parseFeed() -> ()"),
            ])
            events.append([
                "v": 1, "kind": "hitch", "name": "main", "session": session, "ts": ts(hang.at + 100),
                "durationMs": 140.0, "thread": "main (tid \(threads[0].0), state S)",
            ])
            for offset: Int64 in [span / 4_000_000, span * 3 / 4_000_000] {
                events.append([
                    "v": 1, "kind": "note", "name": name("socket.reconnect"), "session": session,
                    "ts": ts(sessionStart + offset),
                ])
            }
            blocks.append([
                "session": session, "takenAt": ts(sessionStart + span / 1_000_000 + 5), "capacity": 4096,
                "recorded": spans.count, "epochUnixMs": sessionStart,
                "threads": threads.map { ["tid": $0.0, "name": $0.1] }, "spans": spans,
            ])
        }
        var report: [String: Any] = [
            "schema": "perf-report", "schemaVersion": 1, "generatedAt": ts(epochMs + 7_300_000),
            "generator": "html-fixture", "truncated": NSNull(),
            "app": ["name": name("feedservice"), "version": "2.4.0", "build": "812"],
            "host": [
                "os": "Debian GNU/Linux 12 (bookworm)", "kernel": "6.1.0", "arch": "x86_64", "cpuModel": "AMD EPYC",
                "cores": 2, "memoryBytes": 8_589_934_592, "swiftVersion": "6.3", "buildConfiguration": "release",
            ],
            "sessions": sessions.enumerated().map { index, entry in
                let start = epochMs + Int64(index) * 3_600_000
                var session: [String: Any] = ["id": entry.0, "status": entry.1, "startedAt": ts(start)]
                if entry.1 != "crashed" { session["endedAt"] = ts(start + 600_000) }
                return session
            },
            "ledger": ["events": events.sorted { ($0["ts"] as! String) < ($1["ts"] as! String) }],
            "spans": Dictionary(
                uniqueKeysWithValues: histograms.map { name, histogram in
                    (
                        name,
                        spanStatistics(
                            histogram, budget: spanNames.first { $0.0 == name }?.1, over: overBudget[name] ?? 0)
                    )
                }),
            "hangs": [
                "count": 2, "fatal": 1, "suppressed": 0, "totalMs": 1125.0, "maxMs": 712.5,
                "culprits": [["culprit": name("static Service.parseFeed() -> ()"), "count": 2, "maxMs": 712.5]],
                "targets": ["main": json(hangHistogram())],
            ],
            "diagnostics": sessions.enumerated().map { index, entry in
                [
                    "session": entry.0, "takenAt": ts(epochMs + Int64(index) * 3_600_000 + 1000),
                    "process": [
                        "rssBytes": 52_428_800 + index * 1_048_576, "peakRssBytes": 73_400_320, "cpuUserMs": 120,
                        "cpuSystemMs": 30, "threads": 9, "openFds": 14,
                    ],
                ] as [String: Any]
            },
        ]
        if shape.intervals { report["intervals"] = blocks }
        return report
    }

    static func spanStatistics(_ histogram: LatencyHistogram, budget: Double?, over: Int) -> [String: Any] {
        let ms = { (nanos: UInt64) in Double(nanos) / 1e6 }
        var span: [String: Any] = [
            "count": histogram.count, "sum": ms(histogram.sumNanos), "min": ms(histogram.minNanos),
            "max": ms(histogram.maxNanos), "p50Ms": ms(histogram.quantile(0.5)), "p90Ms": ms(histogram.quantile(0.9)),
            "p95Ms": ms(histogram.quantile(0.95)), "p99Ms": ms(histogram.quantile(0.99)), "overBudget": over,
            "histogram": json(histogram), "source": "histogram", "sites": ["Service/Handler.swift:42"],
        ]
        span["budgetMs"] = budget ?? NSNull()
        return span
    }

    static func hangHistogram() -> LatencyHistogram {
        var histogram = LatencyHistogram()
        for ms in [140.0, 412.5, 712.5] { histogram.record(nanos: UInt64(ms * 1e6)) }
        return histogram
    }

    static func json(_ histogram: LatencyHistogram) -> Any {
        (try? JSONSerialization.jsonObject(with: Data(histogram.jsonString.utf8))) ?? [:]
    }

    static func ts(_ ms: Int64) -> String {
        var bytes: [UInt8] = []
        LedgerTimestamp.appendISO8601(millisecondsSinceEpoch: ms, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    static func bytes(_ report: [String: Any]) throws -> [UInt8] {
        [UInt8](try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys]))
    }

    static func input(_ shape: Shape = Shape()) throws -> ExportInput {
        try ExportInput(bytes: bytes(report(shape)), path: "/tmp/fixture/performance-report.json")
    }

    static func page(_ shape: Shape = Shape()) throws -> String {
        String(decoding: HTMLExport.render(try input(shape)), as: UTF8.self)
    }
}

enum HTMLStructure {
    /// HTML elements with no end tag that the page uses.
    static let voidElements: Set<String> = ["meta"]

    /// Checks that every tag opened is closed in order; returns the problems found.
    static func problems(_ page: String) -> [String] {
        let bytes = Array(page.utf8)
        var stack: [String] = []
        var problems: [String] = []
        var index = 0
        while let open = bytes[index...].firstIndex(of: UInt8(ascii: "<")) {
            guard let end = bytes[open...].firstIndex(of: UInt8(ascii: ">")) else {
                problems.append("unterminated tag")
                break
            }
            let tag = bytes[(open + 1)..<end]
            index = end + 1
            switch tag.first {
            case UInt8(ascii: "!"):
                continue
            case UInt8(ascii: "/"):
                let closing = String(decoding: tag.dropFirst(), as: UTF8.self)
                if stack.last == closing {
                    stack.removeLast()
                } else {
                    problems.append("</\(closing)> closes <\(stack.last ?? "nothing")>")
                }
            default:
                guard tag.last != UInt8(ascii: "/") else { continue }
                let name = String(decoding: tag.prefix { $0 != UInt8(ascii: " ") }, as: UTF8.self)
                if !voidElements.contains(name) { stack.append(name) }
            }
        }
        if !stack.isEmpty { problems.append("left open: \(stack.joined(separator: " "))") }
        return problems
    }

    /// The text between `<section id="id">` and its `</section>`.
    static func section(_ id: String, in page: String) -> String {
        guard let start = page.range(of: "<section id=\"\(id)\">"),
            let end = page[start.upperBound...].range(of: "</section>")
        else { return "" }
        return String(page[start.upperBound..<end.lowerBound])
    }

    /// How often `needle` occurs in `text`.
    static func occurrences(of needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }
}
