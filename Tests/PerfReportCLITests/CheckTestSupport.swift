// Reports and budgets files built in code for the check and compare tests.
import Foundation

enum CheckFixture {
    struct Span {
        var count: Int
        var p50: Double
        var p95: Double
        var max: Double
        var site: String
    }

    /// A minimal valid performance-report.json.
    static func report(_ spans: [String: Span], hangs: Int = 0, build: String = "release", cpu: String = "cpu-a")
        -> String
    {
        var spanObjects: [String: Any] = [:]
        for (name, span) in spans {
            spanObjects[name] = [
                "count": span.count, "p50Ms": span.p50, "p90Ms": span.p95, "p95Ms": span.p95, "p99Ms": span.p95,
                "max": span.max, "min": span.p50 / 2, "sum": span.p50 * Double(span.count), "overBudget": 0,
                "budgetMs": NSNull(), "sites": [span.site], "source": "histogram",
            ]
        }
        let object: [String: Any] = [
            "schema": "perf-report", "schemaVersion": 1, "generatedAt": "2026-12-02T12:00:00.000Z",
            "app": ["name": "app", "version": "1.0", "build": "1"],
            "host": ["cpuModel": cpu, "swiftVersion": "6.3", "buildConfiguration": build],
            "sessions": [["id": "s1", "status": "terminated"]], "spans": spanObjects,
            "hangs": ["count": hangs, "fatal": 0, "suppressed": 0, "maxMs": hangs > 0 ? 300 : 0, "totalMs": 0],
            "ledger": ["events": [], "malformedLines": 0, "unknownKinds": 0, "tornTail": 0],
        ]
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    /// The scenario of the golden tests: api.get breaches its p95 budget, api.list warns, boot is unbudgeted.
    static let head = report([
        "api.get": Span(count: 240, p50: 100, p95: 912, max: 1500, site: "App/API.swift:88"),
        "api.list": Span(count: 50, p50: 10, p95: 14, max: 30, site: "App/List.swift:12"),
        "boot": Span(count: 1, p50: 19, p95: 19, max: 19, site: "App/Main.swift:3"),
    ])
    static let base = report([
        "api.get": Span(count: 240, p50: 100, p95: 798, max: 1400, site: "App/API.swift:88"),
        "api.list": Span(count: 50, p50: 20, p95: 25, max: 31, site: "App/List.swift:12"),
    ])
    static let budgets = #"""
        {"version":1,
         "spans":[{"match":"api.*","limits":{"p95":{"max":"800ms"},"count":{"min":1}}},
                  {"match":"api.list","limits":{"max":{"max":"20ms","level":"warn"}},"message":"list pages must stay snappy"}],
         "hangs":{"count":{"max":0}}}
        """#

    /// Writes `text` as `name` in `directory`; returns the path.
    @discardableResult
    static func write(_ text: String, _ name: String, in directory: URL) throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }
}
