// Reads a performance-report.json back and renders its summary: spans by p95, hangs with their
// culprits, sessions with their status; as a text table or as JSON.
import Perf
import Foundation

/// The readable digest of a report, as `perf-report summary` prints it.
///
/// ```swift
/// let summary = try ReportSummary(contentsOf: URL(fileURLWithPath: "performance-report.json"))
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
    public init(contentsOf url: URL) throws(Perf.ReportError) {
        let bytes = try ReportFile.read(url.path, limit: 64 << 20).get()
        try self.init(bytes: bytes, path: url.path)
    }

    /// Reads and validates report bytes; `path` is used in messages.
    public init(bytes: [UInt8], path: String) throws(Perf.ReportError) {
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

extension ReportDocument {
    /// The `hangs.culprits` rows; an entry without a culprit string is skipped.
    static func culprits(_ value: Any?) -> [ReportSummary.Culprit] {
        (value as? [Any] ?? []).compactMap { value in
            guard let entry = value as? [String: Any], let culprit = entry["culprit"] as? String else { return nil }
            return ReportSummary.Culprit(culprit: culprit, count: int(entry["count"]), maxMs: double(entry["maxMs"]))
        }
    }
}
