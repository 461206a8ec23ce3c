import Foundation
// What every exporter reads from a performance-report.json: span intervals from the flight
// recorder, ledger events, per-span distributions, hangs, sessions and process samples, with
// times as Unix nanoseconds. Read through the report model, leniently: an exporter draws what a
// damaged report still holds.
import Perf
import PerfCore

/// A report, read once into the shape the exporters need.
///
/// Unknown keys are skipped and a missing section reads as empty, so an older report (one
/// without `intervals`) still exports: ``hasIntervals`` tells the exporter to say so. The report
/// is read ``PerformanceReport/Reading/lenient``: a value of the wrong type is left out (an entry
/// without what identifies it, whole) and listed in ``problems``; so is a time or duration no
/// clock can reach.
///
/// ```swift
/// let input = try ExportInput(contentsOf: URL(fileURLWithPath: "performance-report.json"))
/// print(input.intervals.count, input.events.count)
/// ```
public struct ExportInput: Sendable {
    /// One finished span from a session's flight recorder.
    public struct Interval: Sendable, Equatable {
        /// The session that ran it.
        public var session: String
        /// The span name.
        public var name: String
        /// The kernel thread id that ended it.
        public var threadID: Int64
        /// Wall-clock start, nanoseconds since the Unix epoch.
        public var startUnixNanos: Int64
        /// Duration in nanoseconds.
        public var durationNanos: Int64
        /// `success`, `failure`, `cancelled`, `superseded`, `expired` or `orphaned`.
        public var exit: PerformanceReport.Exit
        /// The budget the span ran under, when it had one.
        public var budgetMs: Double?
    }

    /// A thread's name as the process saw it when the snapshot was taken.
    public struct ThreadName: Sendable, Equatable {
        /// The session.
        public var session: String
        /// The kernel thread id.
        public var threadID: Int64
        /// `main`, a queue or pthread name, or `thread <tid>` when it had exited.
        public var name: String
    }

    /// One ledger line the exporters show: slow spans, hangs, hitches, notes, overdue spans.
    public struct Event: Sendable, Equatable {
        /// The ledger kind (`span`, `hang`, `hitch`, `note`, `overdue`, `session`, …).
        public var kind: PerformanceReport.Event.Kind
        /// The span, note or watchdog-target name.
        public var name: String
        /// The session.
        public var session: String
        /// The line's `ts`, nanoseconds since the Unix epoch: the end of a span or hang. An
        /// orphaned span's `ts` is its start, so its time is that plus ``durationMs``: the end of
        /// the time it is known to have been open.
        public var timeUnixNanos: Int64
        /// Duration in milliseconds, for spans, hangs and hitches; for an orphaned span, a lower
        /// bound of how long it was open (`nil`: unknown).
        public var durationMs: Double?
        /// The span's budget.
        public var budgetMs: Double?
        /// How the span ended.
        public var exit: PerformanceReport.Exit?
        /// The privacy-filtered detail.
        public var detail: String?
        /// The call site, `Module/File.swift:line`.
        public var site: String?
        /// The frame a hang is blamed on.
        public var culprit: String?
        /// Whether a hang was fatal (the process died in it).
        public var fatal: Bool
        /// The thread of a hang, as written (`name (tid N, state S)`).
        public var thread: String?
        /// The kernel thread id parsed out of ``thread``.
        public var threadID: Int64?
        /// The item count a span reported.
        public var count: Int64?
        /// A hang's bounds in milliseconds: ping sent → served, and last idle ping → served.
        public var lowerMs: Double?, upperMs: Double?
        /// Why a hang was not blamed (`paused`, `stalled`, …), when it was suppressed.
        public var suppressed: String?
        /// A span's children by name, heaviest first (empty when it had none).
        public var children: [PerformanceReport.SpanChild] = []
        /// A span's time outside its children, in milliseconds.
        public var selfMs: Double? = nil
        /// A parent span's scope id, and the scope of the parent a child began in: unique within
        /// the session, so a child's `parentScope` names its parent's line.
        public var scope: Int64? = nil, parentScope: Int64? = nil
        /// What the span sampler saw while the span was over budget.
        public var profile: SpanProfile? = nil

        /// Start time in Unix nanoseconds: `ts` minus the duration (or `ts` for instants).
        public var startUnixNanos: Int64 {
            timeUnixNanos - Int64(((durationMs ?? 0) * 1_000_000).rounded())
        }
    }

    /// One span name's distribution.
    public struct SpanStatistics: Sendable, Equatable {
        /// The span name.
        public var name: String
        /// Calls counted.
        public var count: Int64
        /// Total, minimum, maximum and quantiles, in milliseconds.
        public var sumMs: Double, minMs: Double, maxMs: Double
        /// Quantiles in milliseconds.
        public var p50Ms: Double, p90Ms: Double, p95Ms: Double, p99Ms: Double
        /// The budget, when a ledger line told it.
        public var budgetMs: Double?
        /// Ends over budget (exact where span memory counted them, else ledger lines).
        public var overBudget: Int64
        /// Ends by exit other than `success`, by exit.
        public var exits: [String: Int64] = [:]
        /// The full distribution, when the report carries it.
        public var histogram: LatencyHistogram?
        /// `histogram` (every call) or `ledger` (only the slow ones).
        public var source: PerformanceReport.Span.Source
        /// Spans of this name a crashed process left open, when any.
        public var orphaned: Int64? = nil
        /// The longest any of them is known to have been open, in milliseconds (a lower bound).
        public var orphanedLowerMs: Double? = nil
    }

    /// A frame hangs were blamed on: the summary's row, read by the same code.
    public typealias Culprit = ReportSummary.Culprit

    /// Hang totals.
    public struct Hangs: Sendable, Equatable {
        /// Hangs (not hitches), fatal ones and suppressed episodes.
        public var count: Int64, fatal: Int64, suppressed: Int64
        /// Summed and longest duration in milliseconds.
        public var totalMs: Double, maxMs: Double
        /// Culprits by count.
        public var culprits: [Culprit]
        /// Hang and hitch durations per watchdog target.
        public var targets: [String: LatencyHistogram]
    }

    /// A session.
    public struct Session: Sendable, Equatable {
        /// The session id.
        public var id: String
        /// `active`, `terminated` or `crashed`.
        public var status: PerformanceReport.Session.Status
        /// Start and end, Unix nanoseconds, when known.
        public var startedAtUnixNanos: Int64?, endedAtUnixNanos: Int64?
    }

    /// Process figures from one diagnostic snapshot.
    public struct ProcessSample: Sendable, Equatable {
        /// The session.
        public var session: String
        /// When it was taken, Unix nanoseconds.
        public var timeUnixNanos: Int64
        /// Resident and peak resident set in bytes.
        public var rssBytes: Int64, peakRssBytes: Int64
        /// CPU time in milliseconds.
        public var cpuUserMs: Int64, cpuSystemMs: Int64
        /// Threads and open descriptors.
        public var threads: Int64, openFds: Int64
    }

    /// The report's file, for messages.
    public var path: String
    /// The instrumented program (`unknown` when the report does not say).
    public var app: Perf.AppInfo
    /// The machine, when the report names it.
    public var host: HostDescription?
    /// The report's `generatedAt`, Unix nanoseconds (0 when absent).
    public var generatedAtUnixNanos: Int64
    /// Sessions, as listed.
    public var sessions: [Session]
    /// The most sessions live at once, when the report says.
    public var maxConcurrentSessions: Int64?
    /// Flight-recorder spans of every session, oldest first.
    public var intervals: [Interval]
    /// Thread names per session.
    public var threads: [ThreadName]
    /// Ledger events, oldest first.
    public var events: [Event]
    /// Span distributions by name.
    public var spans: [SpanStatistics]
    /// Hang totals.
    public var hangs: Hangs
    /// Process samples, oldest first.
    public var processSamples: [ProcessSample]
    /// What the lenient reading left out of the report.
    public var problems: [PerformanceReport.Problem]
    /// Ledger lines lost before they were written, by cause; span ends span memory had no room for.
    public var droppedLines: [String: Int64] = [:], droppedSpanRecords: Int64 = 0
    /// Over-budget spans the span sampler found no profile slot for.
    public var droppedSpanProfiles: Int64 = 0

    /// Whether the report carries flight-recorder intervals (an older one does not).
    public var hasIntervals: Bool { !intervals.isEmpty }

    /// Reads the report at `url`.
    ///
    /// - Throws: ``ReportError`` naming the file: unreadable, not JSON, not a report, a newer
    ///   schema major version.
    public init(contentsOf url: URL) throws(Perf.ReportError) {
        self.init(report: try PerformanceReport(contentsOf: url, reading: .lenient), path: url.path)
    }

    /// Reads report bytes; `path` is used in messages.
    public init(bytes: [UInt8], path: String) throws(Perf.ReportError) {
        self.init(report: try PerformanceReport(bytes: bytes, path: path, reading: .lenient), path: path)
    }

    /// The export input of a report already read.
    public init(report: PerformanceReport, path: String) {
        self.path = path
        // What the report leaves out reads as empty: an unnamed version or build is "0", and a
        // host without an operating system is none.
        app = Perf.AppInfo(
            name: report.app?.name ?? "unknown",
            version: report.app.map { $0.version.isEmpty ? "0" : $0.version } ?? "0",
            build: report.app.map { $0.build.isEmpty ? "0" : $0.build } ?? "0")
        host = report.host.flatMap { $0.os.isEmpty ? nil : $0 }
        generatedAtUnixNanos = report.generatedAt.flatMap(ExportReading.unixNanos) ?? 0
        sessions = report.sessions.map { session in
            Session(
                id: session.id, status: session.status,
                startedAtUnixNanos: session.startedAt.flatMap(ExportReading.unixNanos),
                endedAtUnixNanos: session.endedAt.flatMap(ExportReading.unixNanos))
        }
        maxConcurrentSessions = report.maxConcurrentSessions
        intervals = ExportReading.merged(report.intervals.flatMap(ExportReading.intervals))
        threads = report.intervals.flatMap(ExportReading.threads)
        events = report.ledger.events.compactMap(ExportReading.event)
        spans = report.spans.map { ExportReading.span(name: $0.key, $0.value) }.sorted { $0.name < $1.name }
        let hangs = report.hangs
        self.hangs = Hangs(
            count: hangs.count, fatal: hangs.fatal, suppressed: hangs.suppressed, totalMs: hangs.totalMs,
            maxMs: hangs.maxMs, culprits: hangs.culprits, targets: hangs.targets)
        processSamples = report.diagnostics.compactMap(ExportReading.processSample)
            .sorted { $0.timeUnixNanos < $1.timeUnixNanos }
        problems = report.problems
        droppedLines = report.input?.droppedLines ?? [:]
        droppedSpanRecords = report.input?.droppedSpanRecords ?? 0
        droppedSpanProfiles = report.input?.droppedSpanProfiles ?? 0
    }
}

/// The per-section conversions behind ``ExportInput``: each returns `nil` for an entry whose
/// times no clock can reach, so one bad entry never costs the rest.
enum ExportReading {
    /// The latest wall time read (2^62 ns, the year 2116) and the longest duration (2^61 ns, 73
    /// years): within them every start, end and difference an exporter computes fits in Int64,
    /// whatever a damaged report says.
    static let maximumUnixNanos: Int64 = 1 << 62
    static let maximumDurationNanos: Int64 = 1 << 61

    /// A report time as Unix nanoseconds; nil before 1970 or past ``maximumUnixNanos``.
    static func unixNanos(_ time: PerformanceReport.Timestamp) -> Int64? {
        guard time.unixMs >= 0, time.unixMs <= maximumUnixNanos / 1_000_000 else { return nil }
        return time.unixMs * 1_000_000
    }

    /// A duration in milliseconds, nil unless it is from 0 to ``maximumDurationNanos``.
    static func durationMs(_ ms: Double?) -> Double? {
        guard let ms, ms >= 0, ms * 1_000_000 < Double(maximumDurationNanos) else { return nil }
        return ms
    }

    /// A block's spans with times made absolute.
    static func intervals(_ block: PerformanceReport.Intervals) -> [ExportInput.Interval] {
        let ring = block.flightRecorder
        guard ring.epochUnixMs >= 0, ring.epochUnixMs <= maximumUnixNanos / 1_000_000 else { return [] }
        let epochNanos = ring.epochUnixMs * 1_000_000
        return ring.spans.compactMap { span in
            // A fabricated report may name times no clock can reach; such a span is skipped.
            guard span.startNanos >= 0, span.durationNanos >= 0 else { return nil }
            let (start, late) = epochNanos.addingReportingOverflow(span.startNanos)
            guard !late, start <= maximumUnixNanos, span.durationNanos < maximumDurationNanos else { return nil }
            return .init(
                session: block.session, name: span.name, threadID: Int64(span.threadID), startUnixNanos: start,
                durationNanos: span.durationNanos, exit: span.exit, budgetMs: span.budgetMs)
        }
    }

    static func threads(_ block: PerformanceReport.Intervals) -> [ExportInput.ThreadName] {
        let names = block.flightRecorder.threads
        return names.keys.sorted().map { .init(session: block.session, threadID: Int64($0), name: names[$0] ?? "") }
    }

    static func event(_ line: PerformanceReport.Event) -> ExportInput.Event? {
        guard var time = unixNanos(line.timestamp) else { return nil }
        let duration = durationMs(line.durationMs)
        // An orphaned span's `ts` is its start: it was open from there for at least its duration.
        if line.kind == .span, line.exit == .orphaned, let duration {
            time = min(time + Int64((duration * 1_000_000).rounded()), maximumUnixNanos)
        }
        var event = ExportInput.Event(
            kind: line.kind, name: line.name, session: line.session, timeUnixNanos: time,
            durationMs: duration, budgetMs: line.budgetMs, exit: line.exit, detail: line.detail,
            site: line.site, culprit: line.culprit, fatal: line.fatal ?? false, thread: line.thread,
            threadID: line.thread.flatMap(threadID), count: line.count, lowerMs: durationMs(line.lowerMs),
            upperMs: durationMs(line.upperMs), suppressed: line.suppressed)
        if line.kind == .span {
            event.children = line.children
            event.selfMs = line.selfMs
            event.scope = line.scope
            event.parentScope = line.parentScope
            event.profile = line.profile
        }
        return event
    }

    /// The tid in a hang line's thread description, `name (tid 25982, state R)`: the last
    /// `(tid `, since a thread's own name may contain the words.
    static func threadID(_ description: String) -> Int64? {
        guard let range = description.range(of: "(tid ", options: .backwards) else { return nil }
        return Int64(description[range.upperBound...].prefix { $0.isASCII && $0.isNumber })
    }

    /// Intervals oldest first (a parent before the children that start with it), each once: two
    /// snapshots of one session's ring overlap, and a span in both is still one span.
    static func merged(_ intervals: [ExportInput.Interval]) -> [ExportInput.Interval] {
        let sorted = intervals.sorted { lhs, rhs in
            if lhs.startUnixNanos != rhs.startUnixNanos { return lhs.startUnixNanos < rhs.startUnixNanos }
            if lhs.durationNanos != rhs.durationNanos { return lhs.durationNanos > rhs.durationNanos }
            if lhs.threadID != rhs.threadID { return lhs.threadID < rhs.threadID }
            return (lhs.session, lhs.name, lhs.exit.rawValue, lhs.budgetMs ?? -1)
                < (rhs.session, rhs.name, rhs.exit.rawValue, rhs.budgetMs ?? -1)
        }
        var unique: [ExportInput.Interval] = []
        unique.reserveCapacity(sorted.count)
        for interval in sorted where interval != unique.last { unique.append(interval) }
        return unique
    }

    static func span(name: String, _ span: PerformanceReport.Span) -> ExportInput.SpanStatistics {
        .init(
            name: name, count: span.count, sumMs: span.sumMs, minMs: span.minMs, maxMs: span.maxMs,
            p50Ms: span.p50Ms, p90Ms: span.p90Ms, p95Ms: span.p95Ms, p99Ms: span.p99Ms, budgetMs: span.budgetMs,
            overBudget: span.overBudget, exits: span.exits ?? [:], histogram: span.histogram, source: span.source,
            orphaned: span.orphaned, orphanedLowerMs: span.orphanedLowerMs)
    }

    static func processSample(_ entry: PerformanceReport.Diagnostic) -> ExportInput.ProcessSample? {
        guard let time = unixNanos(entry.takenAt) else { return nil }
        let process = entry.process
        return .init(
            session: entry.session, timeUnixNanos: time, rssBytes: process.rssBytes ?? 0,
            peakRssBytes: process.peakRssBytes ?? 0, cpuUserMs: process.cpuUserMs ?? 0,
            cpuSystemMs: process.cpuSystemMs ?? 0, threads: process.threads ?? 0, openFds: process.openFds ?? 0)
    }
}
