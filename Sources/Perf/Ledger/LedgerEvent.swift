// One line of `perf-events.jsonl`, schema v1: the value both the writer and the reader speak.

/// One event of the slow-event ledger: one JSON object on one line of `perf-events.jsonl`.
///
/// The stored properties mirror the schema v1 keys of the contract (`v`, `ts`, `session`,
/// `kind`, `name`, then optional keys). Keys the schema does not name travel in ``extra`` so
/// a new key needs no schema change, and a reader keeps the keys it does not know.
///
/// ```swift
/// var event = LedgerEvent(kind: .span, name: "api.get", session: sessionID)
/// event.durationMs = 1234.5
/// event.budgetMs = 1000
/// event.exit = "success"
/// ```
public struct LedgerEvent: Sendable, Equatable {
    /// The schema version this build writes.
    public static let currentVersion = 1

    /// Schema version (`v`); 1 for lines this build writes.
    public var version: Int
    /// Wall time of the event in milliseconds since the Unix epoch (`ts`, written as
    /// ISO-8601 UTC with milliseconds).
    public var timestampMs: Int64
    /// The process session that wrote the line (`session`).
    public var session: String
    /// What happened (`kind`).
    public var kind: Kind
    /// The span, note or event name (`name`).
    public var name: String
    /// Measured duration in milliseconds (`durationMs`).
    public var durationMs: Double?
    /// The call site's budget in milliseconds (`budgetMs`).
    public var budgetMs: Double?
    /// How a span ended: success, failure, cancelled, superseded, expired, orphaned (`exit`).
    public var exit: String?
    /// Privacy-filtered detail (`detail`); see ``PrivacyFilter``.
    public var detail: String?
    /// An item count the caller attached (`count`).
    public var count: Int?
    /// The call site, `Module/File.swift:line` (`site`).
    public var site: String?
    /// Hang lower bound in milliseconds: ping sent to served (`lowerMs`).
    public var lowerMs: Double?
    /// Hang upper bound in milliseconds: last idle ping to served (`upperMs`).
    public var upperMs: Double?
    /// The stall the hang was classified on, in milliseconds (`stallMs`).
    public var stallMs: Double?
    /// Whether the hang never ended because the process died in it (`fatal`).
    public var fatal: Bool?
    /// Why a hang was not blamed on the target, e.g. "process stopped" (`suppressed`).
    public var suppressed: String?
    /// The blocked thread's name (`thread`).
    public var thread: String?
    /// Symbolicated frames of the blocked thread (`stack`).
    public var stack: [String]?
    /// Frames present in every sample of the hang (`stuckFrames`).
    public var stuckFrames: [String]?
    /// The frame the hang is blamed on (`culprit`).
    public var culprit: String?
    /// Keys outside the fixed schema, e.g. `suppressedCount` on notes, `event`/`pid`/`app`/
    /// `version` on session lines, `path` on diagnostic lines, `reason` on spans.
    ///
    /// - Note: A key that collides with a fixed key above is ignored by the encoder: the
    ///   typed property wins.
    public var extra: [String: LedgerValue]

    /// Creates an event with the common keys; set the optional keys afterwards.
    ///
    /// - Parameters:
    ///   - kind: What happened.
    ///   - name: The span, note or event name.
    ///   - session: The writing process's session id.
    ///   - timestampMs: Wall time in milliseconds since the Unix epoch.
    public init(kind: Kind, name: String, session: String, timestampMs: Int64) {
        self.version = LedgerEvent.currentVersion
        self.timestampMs = timestampMs
        self.session = session
        self.kind = kind
        self.name = name
        self.extra = [:]
    }
}

/// A value of a key outside the fixed ledger schema.
public enum LedgerValue: Sendable, Equatable, Hashable {
    /// A JSON string.
    case string(String)
    /// A JSON integer that fits in 64 bits.
    case int(Int64)
    /// A finite JSON number with a fraction or exponent (NaN and infinities are not written).
    case double(Double)
    /// `true` or `false`.
    case bool(Bool)
    /// An array of strings.
    case strings([String])
    /// An array of objects, each written with its keys in byte order (a span's `children`).
    indirect case objects([[String: LedgerValue]])
    /// An object, written with its keys in byte order (a span's `profile`).
    indirect case object([String: LedgerValue])
}

extension LedgerEvent {
    /// The `kind` of a ledger line: an open set of strings, so a newer writer's kinds survive an
    /// older reader (which skips them).
    public struct Kind: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral,
        CustomStringConvertible
    {
        /// The string written to the file.
        public var rawValue: String

        /// Wraps any kind string, including ones this build does not know.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Wraps a literal kind string.
        public init(stringLiteral value: String) { self.rawValue = value }

        /// A span over its budget, or one recorded every time (`slowMs: nil`).
        public static let span: Kind = "span"
        /// A span still open past its budget.
        public static let overdue: Kind = "overdue"
        /// A hang of the monitored thread or queue.
        public static let hang: Kind = "hang"
        /// A stall shorter than a hang but long enough to notice.
        public static let hitch: Kind = "hitch"
        /// A noteworthy event (`Perf.note`).
        public static let note: Kind = "note"
        /// Session start, end or crash.
        public static let session: Kind = "session"
        /// Points at a diagnostic payload file.
        public static let diagnostic: Kind = "diagnostic"
        /// A gap report: lines the writer could not write.
        public static let dropped: Kind = "dropped"

        /// The kinds of schema v1, the ones consumers act on.
        public static let known: Set<Kind> = [.span, .overdue, .hang, .hitch, .note, .session, .diagnostic, .dropped]

        /// Whether this build knows what the kind means.
        public var isKnown: Bool { Kind.known.contains(self) }

        /// The raw string.
        public var description: String { rawValue }
    }
}
