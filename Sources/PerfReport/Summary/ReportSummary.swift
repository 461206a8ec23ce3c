import Foundation
// Reads a performance-report.json back and renders its summary: spans by p95, hangs with their
// culprits, sessions with their status; as a text table or as JSON.
import Perf

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
        /// The call site's budget, when a ledger line or a flight-recorder interval told it.
        public var budgetMs: Double?
        /// Ends over budget (exact where span memory counted them, else ledger lines).
        public var overBudget: Int64
        /// Of those, the ledger lines still held; `nil` in older reports.
        public var overBudgetLines: Int64?
        /// Ends by exit other than `success`, when any.
        public var exits: [String: Int64] = [:]
        /// `histogram` (all calls) or `ledger` (only the recorded, slow ones).
        public var source: PerformanceReport.Span.Source
        /// Whether any call has a duration; when none has (only spans left open for an unknown
        /// time), the percentiles and maximum are not figures to show.
        public var measured: Bool = true
        /// Spans of this name a crashed process left open, when any.
        public var orphaned: Int64?
        /// The longest any of them is known to have been open, in milliseconds (a lower bound).
        public var orphanedLowerMs: Double?
        /// Where the sampled time of its profiled ledger lines went most, when any line has a
        /// profile.
        public var topCause: SpanCause? = nil
    }

    /// One culprit row.
    public typealias Culprit = PerformanceReport.Culprit

    /// One span line of the ledger, among the slowest: the ledger writes a span's line when the
    /// call ran over its budget or did not succeed, with the call's `detail`.
    public struct SlowSpan: Sendable, Equatable {
        /// The span name.
        public var name: String
        /// How long the call took, in milliseconds; for an orphaned span, how long it was open at
        /// least.
        public var durationMs: Double
        /// The call site's budget.
        public var budgetMs: Double?
        /// How the call ended (`success`, `failure`, `expired`, `orphaned`, …).
        public var exit: String?
        /// What the call was about (a request's path), privacy-filtered when it was written.
        public var detail: String?
        /// The line's `ts`.
        public var endedAt: String
    }

    /// One session row.
    public struct Session: Sendable, Equatable {
        /// The session id.
        public var id: String
        /// `active`, `terminated` or `crashed`.
        public var status: PerformanceReport.Session.Status
        /// Start and end, ISO-8601, when known.
        public var startedAt: String?, endedAt: String?
    }

    /// Hitches (stalls past the hitch threshold, under the hang one) per watchdog target.
    public struct Hitch: Sendable, Equatable {
        /// The watchdog target.
        public var target: String
        /// Hitches blamed on it (suppressed episodes excluded).
        public var count: Int64
        /// Episodes not blamed on it (process stopped, debugger, suspend, starved).
        public var suppressed: Int64
        /// The longest blamed one, in milliseconds.
        public var maxMs: Double
    }

    /// Notes per name.
    public struct Note: Sendable, Equatable {
        /// The note name.
        public var name: String
        /// Notes of the name the ledger wrote: its note lines, less those that only carry a
        /// held-back count (`count` 0, written at a floor window's end or at shutdown).
        public var count: Int64
        /// Notes of the name the floor held back (the lines' `suppressedCount`, summed).
        public var suppressed: Int64
    }

    /// What was read, and what of it could not be: the ledger's counters and the payloads.
    public struct Input: Sendable, Equatable {
        /// Valid ledger lines read, and those the report keeps (hitches and notes are counted
        /// from these: the cap keeps the newest).
        public var ledgerEvents: Int64, keptEvents: Int64
        /// Lines that were not ledger events, last lines cut short by a crash, lines of kinds
        /// the builder did not know.
        public var malformedLines: Int64, tornTail: Int64, unknownKinds: Int64
        /// Diagnostic payload files, and those that could not be read.
        public var diagnosticPayloads: Int64, invalidPayloads: Int64
        /// Ledger lines lost before they were written, by cause (`backlog`, `write`).
        public var droppedLines: [String: Int64] = [:]
        /// Span ends span memory had no room for (names past its capacity).
        public var droppedSpanRecords: Int64 = 0
        /// Over-budget spans the span sampler found no profile slot for.
        public var droppedSpanProfiles: Int64 = 0
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
    /// The most sessions live at once, when the report says (a report of an older build does not).
    public var maxConcurrentSessions: Int64?
    /// Hitches per target, most first, from the ledger lines the report keeps.
    public var hitches: [Hitch]
    /// Notes per name, most first, from the ledger lines the report keeps.
    public var notes: [Note]
    /// The longest span lines the report keeps, longest first, at most ``slowestCount``.
    public var slowest: [SlowSpan]
    /// Span lines the report keeps that have a duration: how many ``slowest`` was chosen from.
    public var spanLines: Int
    /// The most rows of ``slowest``.
    public static let slowestCount = 10
    /// What was read and what could not be.
    public var input: Input
    /// Whether the cap left something out of the report.
    public var truncated: Bool

    /// Reads and validates the report at `url`.
    ///
    /// - Throws: ``ReportError`` naming the file: unreadable, not JSON, not a report, a newer
    ///   schema major version, a value of the wrong type.
    public init(contentsOf url: URL) throws(Perf.ReportError) {
        self.init(report: try PerformanceReport(contentsOf: url), path: url.path)
    }

    /// Reads and validates report bytes (strictly: see ``PerformanceReport/Reading``); `path`
    /// is used in messages.
    public init(bytes: [UInt8], path: String) throws(Perf.ReportError) {
        self.init(report: try PerformanceReport(bytes: bytes, path: path), path: path)
    }

    /// One span's row.
    private static func row(name: String, span: PerformanceReport.Span) -> Span {
        var row = Span(
            name: name, count: span.count, p50Ms: span.p50Ms, p95Ms: span.p95Ms, p99Ms: span.p99Ms,
            maxMs: span.maxMs, budgetMs: span.budgetMs, overBudget: span.overBudget, source: span.source)
        row.overBudgetLines = span.overBudgetLines
        row.exits = span.exits ?? [:]
        row.measured = measured(span)
        row.orphaned = span.orphaned
        row.orphanedLowerMs = span.orphanedLowerMs
        return row
    }

    /// The summary of a report already read.
    public init(report: PerformanceReport, path: String) {
        self.path = path
        let app = report.app
        self.app =
            (app?.name ?? "unknown app") + (app.map { $0.version.isEmpty ? "" : " " + $0.version } ?? "")
            + (app.map { $0.build.isEmpty ? "" : " (build \($0.build))" } ?? "")
        generatedAt = report.generatedAt?.description ?? "unknown"
        let causes = SpanCause.top(of: report.ledger.events)
        spans = report.spans.map { name, span in
            var row = Self.row(name: name, span: span)
            row.topCause = causes[name]
            return row
        }
        .sorted { $0.p95Ms != $1.p95Ms ? $0.p95Ms > $1.p95Ms : $0.name < $1.name }
        hangCount = report.hangs.count
        fatalHangs = report.hangs.fatal
        suppressedHangs = report.hangs.suppressed
        hangMaxMs = report.hangs.maxMs
        culprits = report.hangs.culprits
        sessions = report.sessions.map {
            Session(
                id: $0.id, status: $0.status, startedAt: $0.startedAt?.description, endedAt: $0.endedAt?.description)
        }
        maxConcurrentSessions = report.maxConcurrentSessions
        truncated = report.truncated != nil
        hitches = Self.hitchRows(report.ledger.events)
        notes = Self.noteRows(report.ledger.events)
        (slowest, spanLines) = Self.slowestSpans(report.ledger.events)
        let ledger = report.ledger
        let kept = Int64(ledger.events.count)
        input = Input(
            ledgerEvents: max(report.input?.ledgerEvents ?? kept, kept), keptEvents: kept,
            malformedLines: ledger.malformedLines, tornTail: ledger.tornTail, unknownKinds: ledger.unknownKinds,
            diagnosticPayloads: report.input?.diagnosticPayloads ?? Int64(report.diagnostics.count),
            invalidPayloads: report.input?.invalidPayloads ?? 0)
        input.droppedLines = report.input?.droppedLines ?? [:]
        input.droppedSpanRecords = report.input?.droppedSpanRecords ?? 0
        input.droppedSpanProfiles = report.input?.droppedSpanProfiles ?? 0
    }

    /// Hitch lines per target, most first (ties by name).
    static func hitchRows(_ events: [PerformanceReport.Event]) -> [Hitch] {
        var byTarget: [String: Hitch] = [:]
        for event in events where event.kind == .hitch {
            var hitch = byTarget[event.name, default: Hitch(target: event.name, count: 0, suppressed: 0, maxMs: 0)]
            if event.suppressed != nil {
                hitch.suppressed += 1
            } else {
                hitch.count += 1
                let ms = event.durationMs ?? event.stallMs ?? event.lowerMs ?? 0
                if ms.isFinite { hitch.maxMs = max(hitch.maxMs, ms) }
            }
            byTarget[event.name] = hitch
        }
        return byTarget.values.sorted {
            ($0.count + $0.suppressed, $1.target) > ($1.count + $1.suppressed, $0.target)
        }
    }

    /// The longest span lines (ties: the newest, then by name), at most ``slowestCount``, and
    /// how many span lines had a duration.
    static func slowestSpans(_ events: [PerformanceReport.Event]) -> (rows: [SlowSpan], of: Int) {
        let timed = events.filter { $0.kind == .span && ($0.durationMs?.isFinite ?? false) }
        let rows = timed.sorted {
            let left = ($0.durationMs ?? 0, $0.timestamp.unixMs)
            let right = ($1.durationMs ?? 0, $1.timestamp.unixMs)
            return left != right ? left > right : $0.name < $1.name
        }
        .prefix(slowestCount)
        .map {
            SlowSpan(
                name: $0.name, durationMs: $0.durationMs ?? 0, budgetMs: $0.budgetMs, exit: $0.exit?.rawValue,
                detail: $0.detail, endedAt: $0.timestamp.description)
        }
        return (Array(rows), timed.count)
    }

    /// Notes per name, most first (ties by name), with what the floor held back.
    static func noteRows(_ events: [PerformanceReport.Event]) -> [Note] {
        var byName: [String: Note] = [:]
        for event in events where event.kind == .note {
            var note = byName[event.name, default: Note(name: event.name, count: 0, suppressed: 0)]
            if event.count != 0 { note.count += 1 }
            if case .int(let held)? = event.extra["suppressedCount"], held > 0 {
                note.suppressed = note.suppressed.addingReportingOverflow(held).overflow ? .max : note.suppressed + held
            }
            byName[event.name] = note
        }
        return byName.values.sorted { ($0.count, $1.name) > ($1.count, $0.name) }
    }

    /// Whether a span's statistics describe any duration: its histogram holds one, or (a report
    /// without histograms) not every call is an orphan without a bound.
    static func measured(_ span: PerformanceReport.Span) -> Bool {
        if let histogram = span.histogram { return !histogram.isEmpty }
        return span.orphanedLowerMs != nil || (span.orphaned ?? 0) < span.count
    }
}
