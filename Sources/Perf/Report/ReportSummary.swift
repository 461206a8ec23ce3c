// Reads a performance-report.json back and renders its summary: spans by p95, hangs with their
// culprits, sessions with their status; as a text table or as JSON.
import Foundation

extension Perf {
    /// The readable digest of a report, as `perf-report summary` prints it.
    ///
    /// ```swift
    /// let summary = try Perf.ReportSummary(contentsOf: URL(fileURLWithPath: "performance-report.json"))
    /// print(summary.text)
    /// ```
    public struct ReportSummary: Sendable, Equatable {
        /// One span row.
        public struct Span: Sendable, Equatable {
            /// The span name.
            public var name: String
            /// Calls counted.
            public var count: Int64
            /// Median, 95th and 99th percentile and maximum, in milliseconds.
            public var p50Ms: Double, p95Ms: Double, p99Ms: Double, maxMs: Double
            /// The call site's budget, when a ledger line told it.
            public var budgetMs: Double?
            /// Ledger lines over budget.
            public var overBudget: Int64
            /// `histogram` (all calls) or `ledger` (only the recorded, slow ones).
            public var source: String
        }

        /// One culprit row.
        public struct Culprit: Sendable, Equatable {
            /// The frame blamed.
            public var culprit: String
            /// Hangs blamed on it.
            public var count: Int64
            /// The longest of them, in milliseconds.
            public var maxMs: Double
        }

        /// One session row.
        public struct Session: Sendable, Equatable {
            /// The session id.
            public var id: String
            /// `active`, `terminated` or `crashed`.
            public var status: String
            /// Start and end, ISO-8601, when known.
            public var startedAt: String?, endedAt: String?
        }

        /// The report's file, for messages.
        public var path: String
        /// The app line, e.g. `myservice 1.4.0 (build 812)`.
        public var app: String
        /// The report's `generatedAt`.
        public var generatedAt: String
        /// Spans by p95, slowest first.
        public var spans: [Span]
        /// Hang totals.
        public var hangCount: Int64, fatalHangs: Int64, suppressedHangs: Int64, hangMaxMs: Double
        /// Culprits by count.
        public var culprits: [Culprit]
        /// Sessions, newest first.
        public var sessions: [Session]
        /// Whether the cap left something out of the report.
        public var truncated: Bool

        /// Reads and validates the report at `url`.
        ///
        /// - Throws: ``ReportError`` naming the file: unreadable, not JSON, not a report, a newer
        ///   schema major version.
        public init(contentsOf url: URL) throws(ReportError) {
            let bytes = try ReportFile.read(url.path, limit: 64 << 20).get()
            try self.init(bytes: bytes, path: url.path)
        }

        /// Reads and validates report bytes; `path` is used in messages.
        public init(bytes: [UInt8], path: String) throws(ReportError) {
            let object = try ReportDocument.validate(bytes: bytes, path: path)
            self.path = path
            let app = object["app"] as? [String: Any]
            let name = app?["name"] as? String ?? "unknown app"
            let version = app?["version"] as? String
            let build = app?["build"] as? String
            self.app = name + (version.map { " " + $0 } ?? "") + (build.map { " (build \($0))" } ?? "")
            generatedAt = object["generatedAt"] as? String ?? "unknown"
            let spanObjects = object["spans"] as? [String: Any] ?? [:]
            spans = spanObjects.compactMap { name, value -> Span? in
                guard let span = value as? [String: Any] else { return nil }
                return Span(
                    name: name, count: ReportDocument.int(span["count"]), p50Ms: ReportDocument.double(span["p50Ms"]),
                    p95Ms: ReportDocument.double(span["p95Ms"]), p99Ms: ReportDocument.double(span["p99Ms"]),
                    maxMs: ReportDocument.double(span["max"]),
                    budgetMs: span["budgetMs"].flatMap(ReportDocument.number),
                    overBudget: ReportDocument.int(span["overBudget"]), source: span["source"] as? String ?? "histogram"
                )
            }.sorted { $0.p95Ms != $1.p95Ms ? $0.p95Ms > $1.p95Ms : $0.name < $1.name }
            let hangs = object["hangs"] as? [String: Any] ?? [:]
            hangCount = ReportDocument.int(hangs["count"])
            fatalHangs = ReportDocument.int(hangs["fatal"])
            suppressedHangs = ReportDocument.int(hangs["suppressed"])
            hangMaxMs = ReportDocument.double(hangs["maxMs"])
            culprits = ReportDocument.culprits(hangs["culprits"])
            sessions = (object["sessions"] as? [Any] ?? []).compactMap { value -> Session? in
                guard let entry = value as? [String: Any], let id = entry["id"] as? String else { return nil }
                return Session(
                    id: id, status: entry["status"] as? String ?? "unknown", startedAt: entry["startedAt"] as? String,
                    endedAt: entry["endedAt"] as? String)
            }
            truncated = !(object["truncated"] is NSNull) && object["truncated"] != nil
        }
    }
}

/// Validation shared by every reader of reports.
enum ReportDocument {
    /// The report's top-level object, after checking it is JSON, a report, and a version this
    /// build reads.
    static func validate(bytes: [UInt8], path: String) throws(Perf.ReportError) -> [String: Any] {
        guard !bytes.isEmpty else { throw Perf.ReportError(.invalidReport, path: path, "the file is empty") }
        let parsed = try? JSONSerialization.jsonObject(with: Data(bytes), options: [])
        guard let parsed else {
            throw Perf.ReportError(.invalidReport, path: path, "not valid JSON (truncated or corrupt)")
        }
        guard let object = parsed as? [String: Any] else {
            throw Perf.ReportError(.invalidReport, path: path, "not a performance report (not a JSON object)")
        }
        guard let schema = object["schema"] else {
            throw Perf.ReportError(.invalidReport, path: path, "not a performance report (missing \"schema\")")
        }
        guard let name = schema as? String, name == Perf.ReportBuilder.schema else {
            throw Perf.ReportError(
                .invalidReport, path: path, "not a performance report (schema is not \"\(Perf.ReportBuilder.schema)\")")
        }
        guard let version = object["schemaVersion"].flatMap(number), version == version.rounded(), version >= 1 else {
            throw Perf.ReportError(.invalidReport, path: path, "missing or invalid \"schemaVersion\"")
        }
        guard version <= Double(Perf.ReportBuilder.schemaVersion) else {
            throw Perf.ReportError(
                .newerSchema, path: path,
                "schemaVersion \(Int64(clamping: Int(min(version, 1e15)))) is newer than this perf-report reads "
                    + "(\(Perf.ReportBuilder.schemaVersion)); use a newer perf-report")
        }
        for (key, isValid) in [("spans", object["spans"] is [String: Any]), ("sessions", object["sessions"] is [Any])]
        where !isValid {
            throw Perf.ReportError(.invalidReport, path: path, "\"\(key)\" is missing or has the wrong type")
        }
        return object
    }

    /// A JSON number as a double (Foundation bridges `true`/`false` to 1/0 as well).
    static func number(_ value: Any) -> Double? {
        guard let number = value as? NSNumber else { return nil }
        let double = number.doubleValue
        return double.isFinite ? double : nil
    }

    static func double(_ value: Any?) -> Double { value.flatMap(number) ?? 0 }

    /// The `hangs.culprits` rows; an entry without a culprit string is skipped.
    static func culprits(_ value: Any?) -> [Perf.ReportSummary.Culprit] {
        (value as? [Any] ?? []).compactMap { value in
            guard let entry = value as? [String: Any], let culprit = entry["culprit"] as? String else { return nil }
            return Perf.ReportSummary.Culprit(culprit: culprit, count: int(entry["count"]), maxMs: double(entry["maxMs"]))
        }
    }

    static func int(_ value: Any?) -> Int64 {
        guard let double = value.flatMap(number) else { return 0 }
        return Int64(clamping: Int(max(min(double, 9e18), -9e18)))
    }
}
