// The sections of the report model: app, host, sessions, spans, hangs and culprits. Each decodes
// with the report's reading (see ReportDecoding); the ledger and the rest are in +Ledger.
import Foundation
import Perf
import PerfCore

extension PerformanceReport {
    /// The instrumented program (the runtime's ``Perf/AppInfo``). A report that names the program
    /// from a ledger line alone has no build: it reads as empty, as does any absent version.
    public typealias App = Perf.AppInfo

    /// The machine a snapshot was taken on (the runtime's ``HostDescription``). Every key is
    /// optional in the reading: an absent one reads as empty, or 0.
    public typealias Host = HostDescription

    /// The report's reading of ``App``: `name` is required, `version` and `build` may be absent
    /// or `null`.
    struct DecodedApp: Decodable {
        var app: App

        enum CodingKeys: String, CodingKey { case name, version, build }

        init(from decoder: any Decoder) throws {
            let context = decoder.reportContext
            let container = try decoder.container(keyedBy: CodingKeys.self)
            app = App(
                name: try container.required(.name), version: try container.optional(.version, context) ?? "",
                build: try container.optional(.build, context) ?? "")
        }
    }

    /// The report's reading of ``Host``: every key may be absent or `null`.
    struct DecodedHost: Decodable {
        var host: Host

        enum CodingKeys: String, CodingKey {
            case os, kernel, arch, cpuModel, cores, memoryBytes, swiftVersion, buildConfiguration
        }

        init(from decoder: any Decoder) throws {
            let context = decoder.reportContext
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let memoryBytes: Int64 = try container.optional(.memoryBytes, context) ?? 0
            host = Host(
                os: try container.optional(.os, context) ?? "", kernel: try container.optional(.kernel, context) ?? "",
                arch: try container.optional(.arch, context) ?? "",
                cpuModel: try container.optional(.cpuModel, context) ?? "",
                cores: try container.optional(.cores, context) ?? 0, memoryBytes: UInt64(max(0, memoryBytes)),
                swiftVersion: try container.optional(.swiftVersion, context) ?? "",
                buildConfiguration: try container.optional(.buildConfiguration, context) ?? "")
        }
    }

    /// One session: a process run while Perf was installed.
    public struct Session: Codable, Sendable, Equatable {
        /// The session id.
        public var id: String
        /// What became of it.
        public var status: Status
        /// Its start, when a line or snapshot told it.
        public var startedAt: Timestamp?
        /// Its end, when it ended normally.
        public var endedAt: Timestamp?
        /// Its first line or snapshot.
        public var firstSeenAt: Timestamp?
        /// Its process id, when a crashed-session line told it.
        public var pid: Int64?

        /// Creates a session.
        public init(
            id: String, status: Status, startedAt: Timestamp? = nil, endedAt: Timestamp? = nil,
            firstSeenAt: Timestamp? = nil, pid: Int64? = nil
        ) {
            self.id = id
            self.status = status
            self.startedAt = startedAt
            self.endedAt = endedAt
            self.firstSeenAt = firstSeenAt
            self.pid = pid
        }

        enum CodingKeys: String, CodingKey { case id, status, startedAt, endedAt, firstSeenAt, pid }

        /// Reads the object; `id` is required, an absent status reads as `unknown`.
        public init(from decoder: any Decoder) throws {
            let context = decoder.reportContext
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.required(.id)
            status = try container.optional(.status, context) ?? .unknown
            startedAt = try container.optional(.startedAt, context)
            endedAt = try container.optional(.endedAt, context)
            firstSeenAt = try container.optional(.firstSeenAt, context)
            pid = try container.optional(.pid, context)
        }
    }

    /// One span name's statistics, in milliseconds, merged over sessions: each session counts
    /// from its newest snapshot's histogram (plus its ledger lines the snapshot cannot hold) or,
    /// without one, from its ledger lines.
    public struct Span: Codable, Sendable, Equatable {
        /// Calls counted: snapshot calls plus the ledger lines no snapshot holds.
        public var count: Int64
        /// Total, shortest and longest call (`sum`, `min`, `max`).
        public var sumMs: Double, minMs: Double, maxMs: Double
        /// Percentiles.
        public var p50Ms: Double, p90Ms: Double, p95Ms: Double, p99Ms: Double
        /// The distribution the statistics come from.
        public var histogram: Perf.Histogram?
        /// `histogram` when some session's snapshot held the name (every call of that session),
        /// `ledger` when only ledger lines did (the slow ones).
        public var source: Source
        /// The call site's budget, when a ledger line (else a flight-recorder interval) told it.
        public var budgetMs: Double?
        /// Ends over their budget, over the same sessions as `count`: exact from span memory's
        /// counts where a session's snapshot kept them, else its ledger lines over budget.
        public var overBudget: Int64
        /// Of those, the ledger lines still held (the cap rotates the oldest away, a burst may
        /// drop some); `nil` in older reports, where `overBudget` counted lines.
        public var overBudgetLines: Int64?
        /// Ends by exit other than `success` (`failure`, `cancelled`, `superseded`, `expired`),
        /// whatever their duration; `nil` when there were none, and in older reports.
        public var exits: [String: Int64]?
        /// Call sites (`Module/File.swift:88`) of the ledger lines, sorted; empty when no ledger
        /// line of the name gave one.
        public var sites: [String]
        /// With a `histogram` source, the sessions that counted from ledger lines only (no
        /// snapshot of theirs held the name); `nil` when none did, and in older reports.
        public var ledgerOnlySessions: Int64?
        /// Ledger lines of spans a crashed process left open (`"exit":"orphaned"`); `nil` when
        /// none, and in older reports.
        public var orphaned: Int64?
        /// The longest any orphaned span of the name is known to have been open, in
        /// milliseconds: a lower bound. `nil` when no orphaned line told it.
        public var orphanedLowerMs: Double?

        /// Creates a span's statistics.
        public init(
            count: Int64 = 0, sumMs: Double = 0, minMs: Double = 0, maxMs: Double = 0, p50Ms: Double = 0,
            p90Ms: Double = 0, p95Ms: Double = 0, p99Ms: Double = 0, histogram: Perf.Histogram? = nil,
            source: Source = .histogram, budgetMs: Double? = nil, overBudget: Int64 = 0, sites: [String] = [],
            ledgerOnlySessions: Int64? = nil, orphaned: Int64? = nil, orphanedLowerMs: Double? = nil,
            overBudgetLines: Int64? = nil, exits: [String: Int64]? = nil
        ) {
            self.overBudgetLines = overBudgetLines
            self.exits = exits
            self.count = count
            self.sumMs = sumMs
            self.minMs = minMs
            self.maxMs = maxMs
            self.p50Ms = p50Ms
            self.p90Ms = p90Ms
            self.p95Ms = p95Ms
            self.p99Ms = p99Ms
            self.histogram = histogram
            self.source = source
            self.budgetMs = budgetMs
            self.overBudget = overBudget
            self.sites = sites
            self.ledgerOnlySessions = ledgerOnlySessions
            self.orphaned = orphaned
            self.orphanedLowerMs = orphanedLowerMs
        }

        enum CodingKeys: String, CodingKey {
            case count, sumMs = "sum", minMs = "min", maxMs = "max", p50Ms, p90Ms, p95Ms, p99Ms, histogram, source
            case budgetMs, overBudget, sites, ledgerOnlySessions, orphaned, orphanedLowerMs, overBudgetLines, exits
        }

        /// Reads the object; absent numbers read as 0, an absent source as `histogram`, absent
        /// optional members (`ledgerOnlySessions`, `orphaned`, `orphanedLowerMs`) as `nil`.
        public init(from decoder: any Decoder) throws {
            let context = decoder.reportContext
            let container = try decoder.container(keyedBy: CodingKeys.self)
            count = try container.optional(.count, context) ?? 0
            sumMs = try container.optional(.sumMs, context) ?? 0
            minMs = try container.optional(.minMs, context) ?? 0
            maxMs = try container.optional(.maxMs, context) ?? 0
            p50Ms = try container.optional(.p50Ms, context) ?? 0
            p90Ms = try container.optional(.p90Ms, context) ?? 0
            p95Ms = try container.optional(.p95Ms, context) ?? 0
            p99Ms = try container.optional(.p99Ms, context) ?? 0
            histogram = try container.optional(.histogram, context, as: DecodedHistogram.self)?.histogram
            source = try container.optional(.source, context) ?? .histogram
            budgetMs = try container.optional(.budgetMs, context)
            overBudget = try container.optional(.overBudget, context) ?? 0
            sites = try container.list(.sites, context)
            ledgerOnlySessions = try container.optional(.ledgerOnlySessions, context)
            orphaned = try container.optional(.orphaned, context)
            orphanedLowerMs = try container.optional(.orphanedLowerMs, context)
            overBudgetLines = try container.optional(.overBudgetLines, context)
            exits = try container.optional(.exits, context)
        }
    }

    /// Hang totals from the ledger's hang lines, and the snapshots' per-target histograms.
    public struct Hangs: Codable, Sendable, Equatable {
        /// Hangs (not hitches), fatal ones, and suppressed episodes.
        public var count: Int64, fatal: Int64, suppressed: Int64
        /// Summed and longest duration.
        public var totalMs: Double, maxMs: Double
        /// Hang durations.
        public var histogram: Perf.Histogram?
        /// The most frequent culprits, by count.
        public var culprits: [Culprit]
        /// Hang and hitch durations per watchdog target.
        public var targets: [String: Perf.Histogram]

        /// Creates hang totals.
        public init(
            count: Int64 = 0, fatal: Int64 = 0, suppressed: Int64 = 0, totalMs: Double = 0, maxMs: Double = 0,
            histogram: Perf.Histogram? = nil, culprits: [Culprit] = [], targets: [String: Perf.Histogram] = [:]
        ) {
            self.count = count
            self.fatal = fatal
            self.suppressed = suppressed
            self.totalMs = totalMs
            self.maxMs = maxMs
            self.histogram = histogram
            self.culprits = culprits
            self.targets = targets
        }

        enum CodingKeys: String, CodingKey {
            case count, fatal, suppressed, totalMs, maxMs, histogram, culprits, targets
        }

        /// Reads the object; absent numbers read as 0.
        public init(from decoder: any Decoder) throws {
            let context = decoder.reportContext
            let container = try decoder.container(keyedBy: CodingKeys.self)
            count = try container.optional(.count, context) ?? 0
            fatal = try container.optional(.fatal, context) ?? 0
            suppressed = try container.optional(.suppressed, context) ?? 0
            totalMs = try container.optional(.totalMs, context) ?? 0
            maxMs = try container.optional(.maxMs, context) ?? 0
            histogram = try container.optional(.histogram, context, as: DecodedHistogram.self)?.histogram
            culprits = try container.list(.culprits, context)
            targets = try container.map(.targets, context, of: DecodedHistogram.self).mapValues(\.histogram)
        }
    }

    /// A frame hangs were blamed on.
    public struct Culprit: Codable, Sendable, Equatable {
        /// The frame.
        public var culprit: String
        /// Hangs blamed on it.
        public var count: Int64
        /// The longest of them, in milliseconds.
        public var maxMs: Double
        /// The watchdog targets they hung.
        public var targets: [String]

        /// Creates a culprit row.
        public init(culprit: String, count: Int64, maxMs: Double, targets: [String] = []) {
            self.culprit = culprit
            self.count = count
            self.maxMs = maxMs
            self.targets = targets
        }

        enum CodingKeys: String, CodingKey { case culprit, count, maxMs, targets }

        /// Reads the object; `culprit` is required.
        public init(from decoder: any Decoder) throws {
            let context = decoder.reportContext
            let container = try decoder.container(keyedBy: CodingKeys.self)
            culprit = try container.required(.culprit)
            count = try container.optional(.count, context) ?? 0
            maxMs = try container.optional(.maxMs, context) ?? 0
            targets = try container.list(.targets, context)
        }
    }

}
