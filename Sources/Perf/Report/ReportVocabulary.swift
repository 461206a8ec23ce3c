// The values of the report's closed-looking strings that the runtime writes (session status, span
// source, exit), owned by the writer: PerfReport's reading model reads them as these same types.
// They stay open: a value this build does not know reads as `other`, so a newer writer's values
// never make an older reader fail.
import PerfCore

/// A string from a set that a newer writer may extend. Known values are cases; any other is kept
/// (`other`), so decoding never fails on the value, and it is written back unchanged. A literal
/// reads as its case, as with ``LedgerEvent/Kind`` (`status == "crashed"`).
public protocol ReportEnumeration: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral
where RawValue == String {
    /// The case for `rawValue`: a known one, else `other(rawValue)`.
    init(rawValue: String)
}

extension ReportEnumeration {
    /// Reads the string.
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    /// Writes the string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// The case a literal names.
    public init(stringLiteral value: String) { self.init(rawValue: value) }

    /// The string as written.
    public var description: String { rawValue }

    /// Equal when written the same (`other("crashed")` is `crashed`).
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.rawValue == rhs.rawValue }

    /// Hashes the string.
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
}

extension ReportBuilder {
    /// What became of a session (`sessions[].status`).
    public enum SessionStatus: ReportEnumeration {
        /// Started and neither ended nor crashed (still running, or ended without a line).
        case active
        /// Ended normally.
        case terminated
        /// Died; crash recovery wrote a `crashed` line.
        case crashed
        /// The report does not say.
        case unknown
        /// A status this build does not know.
        case other(String)

        /// The case for a written status.
        public init(rawValue: String) {
            switch rawValue {
            case "active": self = .active
            case "terminated": self = .terminated
            case "crashed": self = .crashed
            case "unknown": self = .unknown
            default: self = .other(rawValue)
            }
        }

        /// The string written.
        public var rawValue: String {
            switch self {
            case .active: "active"
            case .terminated: "terminated"
            case .crashed: "crashed"
            case .unknown: "unknown"
            case .other(let value): value
            }
        }
    }

    /// Where a span's statistics come from (`spans.<name>.source`).
    public enum SpanSource: ReportEnumeration {
        /// A snapshot's histogram: every call.
        case histogram
        /// Ledger lines only: the calls over budget and those recorded every time, so the
        /// percentiles describe the slow tail, not the whole distribution.
        case ledger
        /// A source this build does not know.
        case other(String)

        /// The case for a written source.
        public init(rawValue: String) {
            switch rawValue {
            case "histogram": self = .histogram
            case "ledger": self = .ledger
            default: self = .other(rawValue)
            }
        }

        /// The string written.
        public var rawValue: String {
            switch self {
            case .histogram: "histogram"
            case .ledger: "ledger"
            case .other(let value): value
            }
        }
    }

    /// How a span ended, as payloads, reports and ledger lines write it: the writer's ``SpanExit``,
    /// or an exit a newer writer added, kept as written. The reading side of the one exit type:
    /// it wraps ``SpanExit`` rather than spelling its cases again.
    public enum Exit: ReportEnumeration {
        /// An exit this build writes.
        case known(SpanExit)
        /// An exit this build does not know.
        case other(String)

        /// The case for a written exit.
        public init(rawValue: String) {
            self = SpanExit(rawValue: rawValue).map(Exit.known) ?? .other(rawValue)
        }

        /// The exit a span of this process ended with.
        public init(_ exit: SpanExit) { self = .known(exit) }

        /// The string written.
        public var rawValue: String {
            switch self {
            case .known(let exit): exit.rawValue
            case .other(let value): value
            }
        }

        /// The work completed.
        public static let success = Exit.known(.success)
        /// The work threw.
        public static let failure = Exit.known(.failure)
        /// The work was cancelled.
        public static let cancelled = Exit.known(.cancelled)
        /// A keyed span was begun again under its key before it ended.
        public static let superseded = Exit.known(.superseded)
        /// The expiry watchdog closed it past its lifetime budget.
        public static let expired = Exit.known(.expired)
        /// The process died with the span open.
        public static let orphaned = Exit.known(.orphaned)

        /// Whether the work did not complete as intended: `failure`, `expired`, `orphaned`.
        public var isError: Bool { self == .failure || self == .expired || self == .orphaned }
    }
}
