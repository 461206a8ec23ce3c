// What every exporter reads from a performance-report.json: span intervals from the flight
// recorder, ledger events, per-span distributions, hangs, sessions and process samples, with
// times as Unix nanoseconds.
import Perf
import Foundation
import PerfCore

/// A report, read once into the shape the exporters need.
///
/// Unknown keys are skipped and a missing section reads as empty, so an older report (one
/// without `intervals`) still exports: ``hasIntervals`` tells the exporter to say so.
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
        public var exit: String
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
        public var kind: String
        /// The span, note or watchdog-target name.
        public var name: String
        /// The session.
        public var session: String
        /// The line's `ts`, nanoseconds since the Unix epoch: the end of a span or hang.
        public var timeUnixNanos: Int64
        /// Duration in milliseconds, for spans, hangs and hitches.
        public var durationMs: Double?
        /// The span's budget.
        public var budgetMs: Double?
        /// How the span ended.
        public var exit: String?
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
        /// Ledger lines over budget.
        public var overBudget: Int64
        /// The full distribution, when the report carries it.
        public var histogram: LatencyHistogram?
        /// `histogram` (every call) or `ledger` (only the slow ones).
        public var source: String
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
        public var status: String
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
    public var host: Perf.HostDescription?
    /// The report's `generatedAt`, Unix nanoseconds (0 when absent).
    public var generatedAtUnixNanos: Int64
    /// Sessions, as listed.
    public var sessions: [Session]
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

    /// Whether the report carries flight-recorder intervals (an older one does not).
    public var hasIntervals: Bool { !intervals.isEmpty }

    /// Reads the report at `url`.
    ///
    /// - Throws: ``ReportError`` naming the file: unreadable, not JSON, not a report, a newer
    ///   schema major version.
    public init(contentsOf url: URL) throws(Perf.ReportError) {
        let bytes = try ReportFile.read(url.path, limit: 64 << 20).get()
        try self.init(bytes: bytes, path: url.path)
    }

    /// Reads report bytes; `path` is used in messages.
    public init(bytes: [UInt8], path: String) throws(Perf.ReportError) {
        let object = try ReportDocument.validate(bytes: bytes, path: path)
        self.path = path
        let app = object["app"] as? [String: Any]
        self.app = Perf.AppInfo(
            name: app?["name"] as? String ?? "unknown", version: app?["version"] as? String ?? "0",
            build: app?["build"] as? String ?? "0")
        host = (object["host"] as? [String: Any]).flatMap(ExportReading.host)
        generatedAtUnixNanos = ExportReading.unixNanos(object["generatedAt"]) ?? 0
        sessions = (object["sessions"] as? [Any] ?? []).compactMap(ExportReading.session)
        // Each block parsed once, for its spans and its thread names.
        let blocks = (object["intervals"] as? [Any] ?? []).compactMap(ExportReading.block)
        intervals = ExportReading.merged(blocks.flatMap(ExportReading.intervals))
        threads = blocks.flatMap(ExportReading.threads)
        let ledger = object["ledger"] as? [String: Any]
        events = (ledger?["events"] as? [Any] ?? []).compactMap(ExportReading.event)
        spans = (object["spans"] as? [String: Any] ?? [:]).compactMap { ExportReading.span(name: $0.key, value: $0.value) }
            .sorted { $0.name < $1.name }
        hangs = ExportReading.hangs(object["hangs"] as? [String: Any] ?? [:])
        processSamples = (object["diagnostics"] as? [Any] ?? []).compactMap(ExportReading.processSample)
            .sorted { $0.timeUnixNanos < $1.timeUnixNanos }
    }
}

/// The per-section readers behind ``Perf/ExportInput``: each returns `nil` for an entry it
/// cannot use, so one bad entry never costs the rest.
enum ExportReading {
    /// The latest wall time read (2^62 ns, the year 2116) and the longest duration (2^61 ns, 73
    /// years): within them every start, end and difference an exporter computes fits in Int64,
    /// whatever a damaged report says.
    static let maximumUnixNanos: Int64 = 1 << 62
    static let maximumDurationNanos: Int64 = 1 << 61

    /// An ISO-8601 `ts` as Unix nanoseconds; nil when absent, malformed, before 1970 or past
    /// ``maximumUnixNanos``.
    static func unixNanos(_ value: Any?) -> Int64? {
        guard let text = value as? String, let ms = LedgerTimestamp.parseISO8601(text),
            ms >= 0, ms <= maximumUnixNanos / 1_000_000
        else { return nil }
        return ms * 1_000_000
    }

    /// A duration in milliseconds, nil unless it is a number from 0 to ``maximumDurationNanos``.
    static func durationMs(_ value: Any?) -> Double? {
        guard let ms = optionalDouble(value), ms >= 0, ms * 1_000_000 < Double(maximumDurationNanos) else { return nil }
        return ms
    }

    static func optionalDouble(_ value: Any?) -> Double? { value.flatMap(ReportDocument.number) }

    static func histogram(_ value: Any?) -> LatencyHistogram? {
        guard let value, JSONSerialization.isValidJSONObject(value),
            let data = try? JSONSerialization.data(withJSONObject: value),
            let text = String(data: data, encoding: .utf8)
        else { return nil }
        return try? LatencyHistogram(json: text)
    }

    static func host(_ object: [String: Any]) -> Perf.HostDescription? {
        guard let os = object["os"] as? String else { return nil }
        return Perf.HostDescription(
            os: os, kernel: object["kernel"] as? String ?? "", arch: object["arch"] as? String ?? "",
            cpuModel: object["cpuModel"] as? String ?? "", cores: Int(ReportDocument.int(object["cores"])),
            memoryBytes: UInt64(max(0, ReportDocument.int(object["memoryBytes"]))),
            swiftVersion: object["swiftVersion"] as? String ?? "",
            buildConfiguration: object["buildConfiguration"] as? String ?? "")
    }

    static func session(_ value: Any) -> ExportInput.Session? {
        guard let entry = value as? [String: Any], let id = entry["id"] as? String else { return nil }
        return .init(
            id: id, status: entry["status"] as? String ?? "unknown", startedAtUnixNanos: unixNanos(entry["startedAt"]),
            endedAtUnixNanos: unixNanos(entry["endedAt"]))
    }

    /// One session's flight-recorder block, or `nil` when it is not one.
    static func block(_ value: Any) -> (session: String, intervals: Perf.SpanIntervals)? {
        guard let session = (value as? [String: Any])?["session"] as? String,
            let intervals = Perf.SpanIntervals(jsonObject: value)
        else { return nil }
        return (session, intervals)
    }

    /// A block's spans with times made absolute.
    static func intervals(_ block: (session: String, intervals: Perf.SpanIntervals)) -> [ExportInput.Interval] {
        let epochUnixMs = block.intervals.epochUnixMs
        guard epochUnixMs >= 0, epochUnixMs <= maximumUnixNanos / 1_000_000 else { return [] }
        let epochNanos = epochUnixMs * 1_000_000
        return block.intervals.spans.compactMap { span in
            // A fabricated report may name times no clock can reach; such a span is skipped.
            let (start, late) = epochNanos.addingReportingOverflow(span.startNanos)
            guard !late, start <= maximumUnixNanos, span.durationNanos < maximumDurationNanos else { return nil }
            return .init(
                session: block.session, name: span.name, threadID: Int64(span.threadID), startUnixNanos: start,
                durationNanos: span.durationNanos, exit: span.exit, budgetMs: span.budgetMs)
        }
    }

    static func threads(_ block: (session: String, intervals: Perf.SpanIntervals)) -> [ExportInput.ThreadName] {
        let names = block.intervals.threads
        return names.keys.sorted().map { .init(session: block.session, threadID: Int64($0), name: names[$0] ?? "") }
    }

    static func event(_ value: Any) -> ExportInput.Event? {
        guard let line = value as? [String: Any], let kind = line["kind"] as? String,
            let time = unixNanos(line["ts"])
        else { return nil }
        let thread = line["thread"] as? String
        return .init(
            kind: kind, name: line["name"] as? String ?? kind, session: line["session"] as? String ?? "",
            timeUnixNanos: time, durationMs: durationMs(line["durationMs"]),
            budgetMs: optionalDouble(line["budgetMs"]), exit: line["exit"] as? String,
            detail: line["detail"] as? String, site: line["site"] as? String, culprit: line["culprit"] as? String,
            fatal: line["fatal"] as? Bool ?? false, thread: thread, threadID: thread.flatMap(threadID),
            count: line["count"].flatMap(ReportDocument.number).map { Int64(clamping: Int(max(min($0, 9e18), -9e18))) },
            lowerMs: durationMs(line["lowerMs"]), upperMs: durationMs(line["upperMs"]),
            suppressed: line["suppressed"] as? String)
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
            return (lhs.session, lhs.name, lhs.exit, lhs.budgetMs ?? -1)
                < (rhs.session, rhs.name, rhs.exit, rhs.budgetMs ?? -1)
        }
        var unique: [ExportInput.Interval] = []
        unique.reserveCapacity(sorted.count)
        for interval in sorted where interval != unique.last { unique.append(interval) }
        return unique
    }

    static func span(name: String, value: Any) -> ExportInput.SpanStatistics? {
        guard let span = value as? [String: Any] else { return nil }
        let double = { (key: String) in ReportDocument.double(span[key]) }
        return .init(
            name: name, count: ReportDocument.int(span["count"]), sumMs: double("sum"), minMs: double("min"),
            maxMs: double("max"), p50Ms: double("p50Ms"), p90Ms: double("p90Ms"), p95Ms: double("p95Ms"),
            p99Ms: double("p99Ms"), budgetMs: optionalDouble(span["budgetMs"]),
            overBudget: ReportDocument.int(span["overBudget"]), histogram: histogram(span["histogram"]),
            source: span["source"] as? String ?? "histogram")
    }

    static func hangs(_ object: [String: Any]) -> ExportInput.Hangs {
        let culprits = ReportDocument.culprits(object["culprits"])
        let targets = (object["targets"] as? [String: Any] ?? [:]).compactMapValues(histogram)
        return .init(
            count: ReportDocument.int(object["count"]), fatal: ReportDocument.int(object["fatal"]),
            suppressed: ReportDocument.int(object["suppressed"]), totalMs: ReportDocument.double(object["totalMs"]),
            maxMs: ReportDocument.double(object["maxMs"]), culprits: culprits, targets: targets)
    }

    static func processSample(_ value: Any) -> ExportInput.ProcessSample? {
        guard let entry = value as? [String: Any], let session = entry["session"] as? String,
            let time = unixNanos(entry["takenAt"]), let process = entry["process"] as? [String: Any]
        else { return nil }
        return .init(
            session: session, timeUnixNanos: time, rssBytes: ReportDocument.int(process["rssBytes"]),
            peakRssBytes: ReportDocument.int(process["peakRssBytes"]), cpuUserMs: ReportDocument.int(process["cpuUserMs"]),
            cpuSystemMs: ReportDocument.int(process["cpuSystemMs"]), threads: ReportDocument.int(process["threads"]),
            openFds: ReportDocument.int(process["openFds"]))
    }
}
