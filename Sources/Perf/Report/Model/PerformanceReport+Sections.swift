// The sections of the report model: app, sessions, spans, hangs, the ledger's lines, diagnostics,
// intervals, input and truncation. Each decodes with the report's reading (see ReportDecoding).
import Foundation
import PerfCore

extension PerformanceReport {
    /// The instrumented program.
    public struct App: Codable, Sendable, Equatable {
        /// Its name.
        public var name: String
        /// Its version, when known.
        public var version: String?
        /// Its build, when known.
        public var build: String?

        /// Creates app info.
        public init(name: String, version: String? = nil, build: String? = nil) {
            self.name = name
            self.version = version
            self.build = build
        }

        enum CodingKeys: String, CodingKey { case name, version, build }

        /// Reads the object; `name` is required.
        public init(from decoder: any Decoder) throws {
            let context = decoder.reportContext
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.required(.name)
            version = try container.optional(.version, context)
            build = try container.optional(.build, context)
        }
    }

    /// The machine a snapshot was taken on, as far as the report says (every key is optional).
    public struct Host: Codable, Sendable, Equatable {
        /// Operating system name and version.
        public var os: String?
        /// Kernel release.
        public var kernel: String?
        /// CPU architecture.
        public var arch: String?
        /// CPU model name.
        public var cpuModel: String?
        /// Online CPU cores.
        public var cores: Int?
        /// Physical memory in bytes.
        public var memoryBytes: Int64?
        /// The Swift compiler version the program was built with.
        public var swiftVersion: String?
        /// `debug` or `release`.
        public var buildConfiguration: String?

        /// Creates a host description.
        public init(
            os: String? = nil, kernel: String? = nil, arch: String? = nil, cpuModel: String? = nil, cores: Int? = nil,
            memoryBytes: Int64? = nil, swiftVersion: String? = nil, buildConfiguration: String? = nil
        ) {
            self.os = os
            self.kernel = kernel
            self.arch = arch
            self.cpuModel = cpuModel
            self.cores = cores
            self.memoryBytes = memoryBytes
            self.swiftVersion = swiftVersion
            self.buildConfiguration = buildConfiguration
        }

        /// The report's form of a snapshot's host.
        public init(_ host: Perf.HostDescription) {
            self.init(
                os: host.os, kernel: host.kernel, arch: host.arch, cpuModel: host.cpuModel, cores: host.cores,
                memoryBytes: Int64(clamping: host.memoryBytes), swiftVersion: host.swiftVersion,
                buildConfiguration: host.buildConfiguration)
        }

        enum CodingKeys: String, CodingKey {
            case os, kernel, arch, cpuModel, cores, memoryBytes, swiftVersion, buildConfiguration
        }

        /// Reads the object.
        public init(from decoder: any Decoder) throws {
            let context = decoder.reportContext
            let container = try decoder.container(keyedBy: CodingKeys.self)
            os = try container.optional(.os, context)
            kernel = try container.optional(.kernel, context)
            arch = try container.optional(.arch, context)
            cpuModel = try container.optional(.cpuModel, context)
            cores = try container.optional(.cores, context)
            memoryBytes = try container.optional(.memoryBytes, context)
            swiftVersion = try container.optional(.swiftVersion, context)
            buildConfiguration = try container.optional(.buildConfiguration, context)
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

    /// One span name's statistics, in milliseconds.
    public struct Span: Codable, Sendable, Equatable {
        /// Calls counted (ledger lines, for a `ledger` source).
        public var count: Int64
        /// Total, shortest and longest call (`sum`, `min`, `max`).
        public var sumMs: Double, minMs: Double, maxMs: Double
        /// Percentiles.
        public var p50Ms: Double, p90Ms: Double, p95Ms: Double, p99Ms: Double
        /// The distribution the statistics come from.
        public var histogram: Perf.Histogram?
        /// A snapshot's histogram (every call) or ledger lines (the slow ones).
        public var source: Source
        /// The call site's budget, when a ledger line told it.
        public var budgetMs: Double?
        /// Ledger lines over their budget.
        public var overBudget: Int64
        /// Call sites (`Module/File.swift:88`), sorted.
        public var sites: [String]

        /// Creates a span's statistics.
        public init(
            count: Int64 = 0, sumMs: Double = 0, minMs: Double = 0, maxMs: Double = 0, p50Ms: Double = 0,
            p90Ms: Double = 0, p95Ms: Double = 0, p99Ms: Double = 0, histogram: Perf.Histogram? = nil,
            source: Source = .histogram, budgetMs: Double? = nil, overBudget: Int64 = 0, sites: [String] = []
        ) {
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
        }

        enum CodingKeys: String, CodingKey {
            case count, sumMs = "sum", minMs = "min", maxMs = "max", p50Ms, p90Ms, p95Ms, p99Ms, histogram, source
            case budgetMs, overBudget, sites
        }

        /// Reads the object; absent numbers read as 0, an absent source as `histogram`.
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

    /// The ledger's newest lines and its counters.
    public struct Ledger: Codable, Sendable, Equatable {
        /// Lines, oldest first.
        public var events: [Event]
        /// Lines that were not ledger events.
        public var malformedLines: Int64
        /// A last line cut short by a crash (0 or 1 per file).
        public var tornTail: Int64
        /// Lines of kinds the builder did not know.
        public var unknownKinds: Int64

        /// Creates the ledger section.
        public init(events: [Event] = [], malformedLines: Int64 = 0, tornTail: Int64 = 0, unknownKinds: Int64 = 0) {
            self.events = events
            self.malformedLines = malformedLines
            self.tornTail = tornTail
            self.unknownKinds = unknownKinds
        }

        enum CodingKeys: String, CodingKey { case events, malformedLines, tornTail, unknownKinds }

        /// Reads the object; absent counters read as 0.
        public init(from decoder: any Decoder) throws {
            let context = decoder.reportContext
            let container = try decoder.container(keyedBy: CodingKeys.self)
            events = try container.list(.events, context)
            malformedLines = try container.optional(.malformedLines, context) ?? 0
            tornTail = try container.optional(.tornTail, context) ?? 0
            unknownKinds = try container.optional(.unknownKinds, context) ?? 0
        }
    }

    /// One ledger line (schema v1 of `perf-events.jsonl`), as the report carries it.
    public struct Event: Codable, Sendable, Equatable {
        /// The line's schema version (`v`).
        public var version: Int?
        /// When it happened (`ts`): the end of a span or hang.
        public var timestamp: Timestamp
        /// The session that wrote it.
        public var session: String
        /// What it records.
        public var kind: Kind
        /// The span, note or watchdog-target name.
        public var name: String
        /// Duration of a span, hang or hitch, in milliseconds.
        public var durationMs: Double?
        /// A span's budget, in milliseconds.
        public var budgetMs: Double?
        /// How a span ended.
        public var exit: Exit?
        /// The privacy-filtered detail.
        public var detail: String?
        /// The item count a span reported.
        public var count: Int64?
        /// The call site, `Module/File.swift:line`.
        public var site: String?
        /// A hang's bounds in milliseconds: ping sent → served, and last idle ping → served.
        public var lowerMs: Double?, upperMs: Double?
        /// The stall a hang was classified on, in milliseconds.
        public var stallMs: Double?
        /// Whether the process died in the hang.
        public var fatal: Bool?
        /// Why a hang was not blamed (`process stopped`, …).
        public var suppressed: String?
        /// The blocked thread, `name (tid N, state S)`.
        public var thread: String?
        /// The blocked thread's frames.
        public var stack: [String]?
        /// Frames present in every sample of the hang.
        public var stuckFrames: [String]?
        /// The frame the hang is blamed on.
        public var culprit: String?
        /// Keys outside the fixed schema (`app`, `version`, `pid` on session lines, `path` on
        /// diagnostic lines, `reason` on spans, …), as the ledger keeps them.
        public var extra: [String: Perf.LedgerValue]

        /// Creates a line with the common keys; set the others afterwards.
        public init(kind: Kind, name: String, session: String, timestamp: Timestamp) {
            self.version = Perf.LedgerEvent.currentVersion
            self.timestamp = timestamp
            self.session = session
            self.kind = kind
            self.name = name
            self.extra = [:]
        }

        enum CodingKeys: String, CodingKey, CaseIterable {
            case version = "v", timestamp = "ts", session, kind, name, durationMs, budgetMs, exit, detail, count, site
            case lowerMs, upperMs, stallMs, fatal, suppressed, thread, stack, stuckFrames, culprit
        }

        /// Reads the object; `ts`, `kind`, `name` and `session` are required.
        public init(from decoder: any Decoder) throws {
            let context = decoder.reportContext
            let container = try decoder.container(keyedBy: CodingKeys.self)
            timestamp = try container.required(.timestamp)
            kind = try container.required(.kind)
            name = try container.required(.name)
            session = try container.required(.session)
            version = try container.optional(.version, context)
            durationMs = try container.optional(.durationMs, context)
            budgetMs = try container.optional(.budgetMs, context)
            exit = try container.optional(.exit, context)
            detail = try container.optional(.detail, context)
            count = try container.optional(.count, context)
            site = try container.optional(.site, context)
            lowerMs = try container.optional(.lowerMs, context)
            upperMs = try container.optional(.upperMs, context)
            stallMs = try container.optional(.stallMs, context)
            fatal = try container.optional(.fatal, context)
            suppressed = try container.optional(.suppressed, context)
            thread = try container.optional(.thread, context)
            stack = try container.optional(.stack, context)
            stuckFrames = try container.optional(.stuckFrames, context)
            culprit = try container.optional(.culprit, context)
            extra = [:]
            let open = try decoder.container(keyedBy: ReportKey.self)
            for key in open.allKeys where CodingKeys(stringValue: key.stringValue) == nil {
                // As the ledger reader does: a null or nested value is not kept.
                if let value = try? open.decode(Perf.LedgerValue.self, forKey: key) { extra[key.stringValue] = value }
            }
        }

        /// Writes the fixed keys that are set and the open ones beside them.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(version, forKey: .version)
            try container.encode(timestamp, forKey: .timestamp)
            try container.encode(session, forKey: .session)
            try container.encode(kind, forKey: .kind)
            try container.encode(name, forKey: .name)
            try container.encodeIfPresent(durationMs, forKey: .durationMs)
            try container.encodeIfPresent(budgetMs, forKey: .budgetMs)
            try container.encodeIfPresent(exit, forKey: .exit)
            try container.encodeIfPresent(detail, forKey: .detail)
            try container.encodeIfPresent(count, forKey: .count)
            try container.encodeIfPresent(site, forKey: .site)
            try container.encodeIfPresent(lowerMs, forKey: .lowerMs)
            try container.encodeIfPresent(upperMs, forKey: .upperMs)
            try container.encodeIfPresent(stallMs, forKey: .stallMs)
            try container.encodeIfPresent(fatal, forKey: .fatal)
            try container.encodeIfPresent(suppressed, forKey: .suppressed)
            try container.encodeIfPresent(thread, forKey: .thread)
            try container.encodeIfPresent(stack, forKey: .stack)
            try container.encodeIfPresent(stuckFrames, forKey: .stuckFrames)
            try container.encodeIfPresent(culprit, forKey: .culprit)
            var open = encoder.container(keyedBy: ReportKey.self)
            for (key, value) in extra where CodingKeys(stringValue: key) == nil {
                try open.encode(value, forKey: ReportKey(key))
            }
        }
    }

    /// Where a diagnostic snapshot came from, and its process figures (its histograms are
    /// merged into ``PerformanceReport/spans`` and ``PerformanceReport/hangs``).
    public struct Diagnostic: Codable, Sendable, Equatable {
        /// The payload, relative to the data directory (`perf-diagnostics/…json`).
        public var file: String?
        /// The session that took it.
        public var session: String
        /// When.
        public var takenAt: Timestamp
        /// Why: `on-demand`, `periodic` or `shutdown`.
        public var reason: String?
        /// The process figures.
        public var process: Perf.ProcessFigures

        /// Creates a diagnostics entry.
        public init(
            file: String? = nil, session: String, takenAt: Timestamp, reason: String? = nil,
            process: Perf.ProcessFigures
        ) {
            self.file = file
            self.session = session
            self.takenAt = takenAt
            self.reason = reason
            self.process = process
        }

        enum CodingKeys: String, CodingKey { case file, session, takenAt, reason, process }

        /// Reads the object; `session`, `takenAt` and `process` are required.
        public init(from decoder: any Decoder) throws {
            let context = decoder.reportContext
            let container = try decoder.container(keyedBy: CodingKeys.self)
            session = try container.required(.session)
            takenAt = try container.required(.takenAt)
            process = try container.required(.process)
            file = try container.optional(.file, context)
            reason = try container.optional(.reason, context)
        }
    }

    /// One session's flight-recorder spans, from its newest snapshot.
    public struct Intervals: Codable, Sendable, Equatable {
        /// The session.
        public var session: String
        /// When the snapshot was taken.
        public var takenAt: Timestamp?
        /// What the ring held (its keys sit beside `session` and `takenAt` in the file).
        public var flightRecorder: Perf.SpanIntervals

        /// Creates a block.
        public init(session: String, takenAt: Timestamp? = nil, flightRecorder: Perf.SpanIntervals) {
            self.session = session
            self.takenAt = takenAt
            self.flightRecorder = flightRecorder
        }

        enum CodingKeys: String, CodingKey { case session, takenAt }

        /// Reads the object; `session`, `epochUnixMs` and `spans` are required.
        public init(from decoder: any Decoder) throws {
            let context = decoder.reportContext
            let container = try decoder.container(keyedBy: CodingKeys.self)
            session = try container.required(.session)
            takenAt = try container.optional(.takenAt, context)
            flightRecorder = try Perf.SpanIntervals(from: decoder)
        }

        /// Writes one object: the session, the time and the ring's keys.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(session, forKey: .session)
            try container.encodeIfPresent(takenAt, forKey: .takenAt)
            try flightRecorder.encode(to: encoder)
        }
    }

    /// What the builder read.
    public struct Input: Codable, Sendable, Equatable {
        /// Valid ledger lines.
        public var ledgerEvents: Int64
        /// Diagnostic payload files.
        public var diagnosticPayloads: Int64
        /// Payload files that could not be read.
        public var invalidPayloads: Int64

        /// Creates the input counts.
        public init(ledgerEvents: Int64 = 0, diagnosticPayloads: Int64 = 0, invalidPayloads: Int64 = 0) {
            self.ledgerEvents = ledgerEvents
            self.diagnosticPayloads = diagnosticPayloads
            self.invalidPayloads = invalidPayloads
        }

        enum CodingKeys: String, CodingKey { case ledgerEvents, diagnosticPayloads, invalidPayloads }

        /// Reads the object; absent counts read as 0.
        public init(from decoder: any Decoder) throws {
            let context = decoder.reportContext
            let container = try decoder.container(keyedBy: CodingKeys.self)
            ledgerEvents = try container.optional(.ledgerEvents, context) ?? 0
            diagnosticPayloads = try container.optional(.diagnosticPayloads, context) ?? 0
            invalidPayloads = try container.optional(.invalidPayloads, context) ?? 0
        }
    }

    /// What the size cap left out.
    public struct Truncated: Codable, Sendable, Equatable {
        /// The cap, in bytes.
        public var capBytes: Int64?
        /// Entries left out, per section (absent when even the fixed sections did not fit).
        public var sessionsOmitted: Int64?, spansOmitted: Int64?, ledgerEventsOmitted: Int64?
        /// Entries left out, per section.
        public var diagnosticsOmitted: Int64?, intervalsOmitted: Int64?
        /// Why, in words.
        public var reason: String?

        /// Creates the truncation note.
        public init(
            capBytes: Int64? = nil, sessionsOmitted: Int64? = nil, spansOmitted: Int64? = nil,
            ledgerEventsOmitted: Int64? = nil, diagnosticsOmitted: Int64? = nil, intervalsOmitted: Int64? = nil,
            reason: String? = nil
        ) {
            self.capBytes = capBytes
            self.sessionsOmitted = sessionsOmitted
            self.spansOmitted = spansOmitted
            self.ledgerEventsOmitted = ledgerEventsOmitted
            self.diagnosticsOmitted = diagnosticsOmitted
            self.intervalsOmitted = intervalsOmitted
            self.reason = reason
        }

        enum CodingKeys: String, CodingKey {
            case capBytes, sessionsOmitted, spansOmitted, ledgerEventsOmitted, diagnosticsOmitted, intervalsOmitted
            case reason
        }

        /// Reads the object.
        public init(from decoder: any Decoder) throws {
            let context = decoder.reportContext
            let container = try decoder.container(keyedBy: CodingKeys.self)
            capBytes = try container.optional(.capBytes, context)
            sessionsOmitted = try container.optional(.sessionsOmitted, context)
            spansOmitted = try container.optional(.spansOmitted, context)
            ledgerEventsOmitted = try container.optional(.ledgerEventsOmitted, context)
            diagnosticsOmitted = try container.optional(.diagnosticsOmitted, context)
            intervalsOmitted = try container.optional(.intervalsOmitted, context)
            reason = try container.optional(.reason, context)
        }
    }
}

extension Perf.LedgerValue: Codable {
    /// Reads a string, an integer, a number, `true`/`false` or an array of strings.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let integer = try? container.decode(Int64.self) {
            self = .int(integer)
        } else if let number = try? container.decode(Double.self) {
            self = .double(number)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let strings = try? container.decode([String].self) {
            self = .strings(strings)
        } else {
            throw DecodingError.typeMismatch(
                Perf.LedgerValue.self,
                .init(codingPath: decoder.codingPath, debugDescription: "not a string, number, boolean or strings"))
        }
    }

    /// Writes the value.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .strings(let value): try container.encode(value)
        }
    }
}

extension Perf.ProcessFigures: Encodable {
    /// Writes the figures that are set (and `pressureTotalUs` when it has any).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(rssBytes, forKey: .rssBytes)
        try container.encodeIfPresent(peakRssBytes, forKey: .peakRssBytes)
        try container.encodeIfPresent(cpuUserMs, forKey: .cpuUserMs)
        try container.encodeIfPresent(cpuSystemMs, forKey: .cpuSystemMs)
        try container.encodeIfPresent(voluntaryContextSwitches, forKey: .voluntaryContextSwitches)
        try container.encodeIfPresent(involuntaryContextSwitches, forKey: .involuntaryContextSwitches)
        try container.encodeIfPresent(minorFaults, forKey: .minorFaults)
        try container.encodeIfPresent(majorFaults, forKey: .majorFaults)
        try container.encodeIfPresent(threads, forKey: .threads)
        try container.encodeIfPresent(openFds, forKey: .openFds)
        if !pressureTotalUs.isEmpty { try container.encode(pressureTotalUs, forKey: .pressureTotalUs) }
    }
}
