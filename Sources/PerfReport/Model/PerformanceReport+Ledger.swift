// The report model's ledger section and the remaining parts: the ledger's lines, diagnostics,
// intervals, input and truncation, and the Codable forms of LedgerValue and ProcessFigures.
import Foundation
import Perf
import PerfCore

extension PerformanceReport {
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

    /// One ledger line (schema v1 of `perf-events.jsonl`), as the report carries it: the ledger's
    /// own ``LedgerEvent``, whose fields read through this value (`event.durationMs`), with its
    /// time, kind, exit and count in the report's types.
    @dynamicMemberLookup
    public struct Event: Codable, Sendable, Equatable {
        /// The line as the ledger holds it.
        public var line: LedgerEvent
        /// Whether the line names its schema version: a report line without `v` is read, and
        /// written back, without one.
        private var namesVersion = true

        /// Wraps a ledger line.
        public init(_ line: LedgerEvent) { self.line = line }

        /// Creates a line with the common keys; set the others afterwards.
        public init(kind: Kind, name: String, session: String, timestamp: Timestamp) {
            line = LedgerEvent(
                kind: LedgerEvent.Kind(rawValue: kind.rawValue), name: name, session: session,
                timestampMs: timestamp.unixMs)
        }

        /// A field of the line (`durationMs`, `site`, `extra`, …).
        public subscript<Value>(dynamicMember field: WritableKeyPath<LedgerEvent, Value>) -> Value {
            get { line[keyPath: field] }
            set { line[keyPath: field] = newValue }
        }

        /// The line's schema version (`v`), when it names one.
        public var version: Int? {
            get { namesVersion ? line.version : nil }
            set {
                namesVersion = newValue != nil
                line.version = newValue ?? LedgerEvent.currentVersion
            }
        }

        /// When it happened (`ts`): the end of a span or hang.
        public var timestamp: Timestamp {
            get { Timestamp(unixMs: line.timestampMs) }
            set { line.timestampMs = newValue.unixMs }
        }

        /// What it records.
        public var kind: Kind {
            get { Kind(rawValue: line.kind.rawValue) }
            set { line.kind = LedgerEvent.Kind(rawValue: newValue.rawValue) }
        }

        /// How a span ended.
        public var exit: Exit? {
            get { line.exit.map(Exit.init(rawValue:)) }
            set { line.exit = newValue?.rawValue }
        }

        /// The item count a span reported.
        public var count: Int64? {
            get { line.count.map(Int64.init) }
            set { line.count = newValue.map { Int(truncatingIfNeeded: $0) } }
        }

        enum CodingKeys: String, CodingKey, CaseIterable {
            case version = "v", timestamp = "ts", session, kind, name, durationMs, budgetMs, exit, detail, count, site
            case lowerMs, upperMs, stallMs, fatal, suppressed, thread, stack, stuckFrames, culprit
        }

        /// Reads the object; `ts`, `kind`, `name` and `session` are required.
        public init(from decoder: any Decoder) throws {
            let context = decoder.reportContext
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let timestamp: Timestamp = try container.required(.timestamp)
            let kind: Kind = try container.required(.kind)
            let name: String = try container.required(.name)
            let session: String = try container.required(.session)
            self.init(kind: kind, name: name, session: session, timestamp: timestamp)
            version = try container.optional(.version, context)
            line.durationMs = try container.optional(.durationMs, context)
            line.budgetMs = try container.optional(.budgetMs, context)
            exit = try container.optional(.exit, context)
            line.detail = try container.optional(.detail, context)
            count = try container.optional(.count, context)
            line.site = try container.optional(.site, context)
            line.lowerMs = try container.optional(.lowerMs, context)
            line.upperMs = try container.optional(.upperMs, context)
            line.stallMs = try container.optional(.stallMs, context)
            line.fatal = try container.optional(.fatal, context)
            line.suppressed = try container.optional(.suppressed, context)
            line.thread = try container.optional(.thread, context)
            line.stack = try container.optional(.stack, context)
            line.stuckFrames = try container.optional(.stuckFrames, context)
            line.culprit = try container.optional(.culprit, context)
            let open = try decoder.container(keyedBy: ReportKey.self)
            for key in open.allKeys where CodingKeys(stringValue: key.stringValue) == nil {
                // As the ledger reader does: a null or nested value is not kept.
                if let value = try? open.decode(LedgerValue.self, forKey: key) { line.extra[key.stringValue] = value }
            }
        }

        /// Writes the fixed keys that are set and the open ones beside them.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(version, forKey: .version)
            try container.encode(timestamp, forKey: .timestamp)
            try container.encode(line.session, forKey: .session)
            try container.encode(kind, forKey: .kind)
            try container.encode(line.name, forKey: .name)
            try container.encodeIfPresent(line.durationMs, forKey: .durationMs)
            try container.encodeIfPresent(line.budgetMs, forKey: .budgetMs)
            try container.encodeIfPresent(exit, forKey: .exit)
            try container.encodeIfPresent(line.detail, forKey: .detail)
            try container.encodeIfPresent(count, forKey: .count)
            try container.encodeIfPresent(line.site, forKey: .site)
            try container.encodeIfPresent(line.lowerMs, forKey: .lowerMs)
            try container.encodeIfPresent(line.upperMs, forKey: .upperMs)
            try container.encodeIfPresent(line.stallMs, forKey: .stallMs)
            try container.encodeIfPresent(line.fatal, forKey: .fatal)
            try container.encodeIfPresent(line.suppressed, forKey: .suppressed)
            try container.encodeIfPresent(line.thread, forKey: .thread)
            try container.encodeIfPresent(line.stack, forKey: .stack)
            try container.encodeIfPresent(line.stuckFrames, forKey: .stuckFrames)
            try container.encodeIfPresent(line.culprit, forKey: .culprit)
            var open = encoder.container(keyedBy: ReportKey.self)
            for (key, value) in line.extra where CodingKeys(stringValue: key) == nil {
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
        public var process: ProcessFigures

        /// Creates a diagnostics entry.
        public init(
            file: String? = nil, session: String, takenAt: Timestamp, reason: String? = nil,
            process: ProcessFigures
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
        public var flightRecorder: SpanIntervals

        /// Creates a block.
        public init(session: String, takenAt: Timestamp? = nil, flightRecorder: SpanIntervals) {
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
            flightRecorder = try SpanIntervals(from: decoder)
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
        /// Ledger lines lost before they were written, by cause (`backlog`, `write`), as the
        /// ledger's `dropped` lines count them; empty when none (and in older reports).
        public var droppedLines: [String: Int64]
        /// Span ends the sessions' span memory had no room for (names past its capacity).
        public var droppedSpanRecords: Int64
        /// Over-budget spans the sessions' span samplers found no profile slot for (their lines
        /// have no `profile`).
        public var droppedSpanProfiles: Int64

        /// Creates the input counts.
        public init(
            ledgerEvents: Int64 = 0, diagnosticPayloads: Int64 = 0, invalidPayloads: Int64 = 0,
            droppedLines: [String: Int64] = [:], droppedSpanRecords: Int64 = 0, droppedSpanProfiles: Int64 = 0
        ) {
            self.ledgerEvents = ledgerEvents
            self.diagnosticPayloads = diagnosticPayloads
            self.invalidPayloads = invalidPayloads
            self.droppedLines = droppedLines
            self.droppedSpanRecords = droppedSpanRecords
            self.droppedSpanProfiles = droppedSpanProfiles
        }

        enum CodingKeys: String, CodingKey {
            case ledgerEvents, diagnosticPayloads, invalidPayloads, droppedLines, droppedSpanRecords
            case droppedSpanProfiles
        }

        /// Reads the object; absent counts read as 0.
        public init(from decoder: any Decoder) throws {
            let context = decoder.reportContext
            let container = try decoder.container(keyedBy: CodingKeys.self)
            ledgerEvents = try container.optional(.ledgerEvents, context) ?? 0
            diagnosticPayloads = try container.optional(.diagnosticPayloads, context) ?? 0
            invalidPayloads = try container.optional(.invalidPayloads, context) ?? 0
            droppedLines = try container.optional(.droppedLines, context) ?? [:]
            droppedSpanRecords = try container.optional(.droppedSpanRecords, context) ?? 0
            droppedSpanProfiles = try container.optional(.droppedSpanProfiles, context) ?? 0
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

extension LedgerValue: Codable {
    /// Reads a string, an integer, a number, `true`/`false`, an array of strings, an object of such
    /// values or an array of objects.
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
        } else if let object = try? container.decode([String: LedgerValue].self) {
            self = .object(object)
        } else if let objects = try? container.decode([[String: LedgerValue]].self) {
            self = .objects(objects)
        } else {
            throw DecodingError.typeMismatch(
                LedgerValue.self,
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
        case .objects(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension ProcessFigures: Encodable {
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
