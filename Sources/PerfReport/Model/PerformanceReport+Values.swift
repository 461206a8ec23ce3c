// The report model's values and their names: its times, its ledger kinds, and the enums it shares
// with the builder that writes them (``ReportBuilder``'s).
import Perf
import PerfCore

extension PerformanceReport {
    /// How a span ended (see ``ReportBuilder/Exit``).
    public typealias Exit = ReportBuilder.Exit

    /// An ISO-8601 UTC time with milliseconds, as every report time is written
    /// (`2026-12-02T13:00:00.123Z`).
    public struct Timestamp: Codable, Hashable, Comparable, Sendable, CustomStringConvertible {
        /// Milliseconds since the Unix epoch.
        public var unixMs: Int64

        /// The time `unixMs` milliseconds after the Unix epoch.
        public init(unixMs: Int64) { self.unixMs = unixMs }

        /// Parses the written form (0 to 9 fraction digits); `nil` for anything else.
        public init?(_ text: String) {
            guard let ms = LedgerTimestamp.parseISO8601(text) else { return nil }
            unixMs = ms
        }

        /// The written form.
        public var description: String { LedgerTimestamp.string(ms: unixMs) }

        /// Reads the string; one that is not an ISO-8601 UTC time is data corruption.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            guard let parsed = Timestamp(try container.decode(String.self)) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "expected an ISO-8601 UTC time such as 2026-12-02T13:00:00.000Z")
            }
            self = parsed
        }

        /// Writes the string.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(description)
        }

        /// Earlier first.
        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.unixMs < rhs.unixMs }
    }
}

extension PerformanceReport.Session {
    /// What became of a session (see ``ReportBuilder/SessionStatus``).
    public typealias Status = ReportBuilder.SessionStatus
}

extension PerformanceReport.Span {
    /// Where a span's statistics come from (see ``ReportBuilder/SpanSource``).
    public typealias Source = ReportBuilder.SpanSource
}

extension PerformanceReport.Event {
    /// What a ledger line records.
    public enum Kind: ReportEnumeration {
        /// A span over its budget, or one recorded every time.
        case span
        /// A span still open past its budget.
        case overdue
        /// A hang of a monitored thread or queue.
        case hang
        /// A stall shorter than a hang.
        case hitch
        /// A noteworthy event.
        case note
        /// A session's start, end or crash.
        case session
        /// A diagnostic payload was written.
        case diagnostic
        /// Lines the writer could not write.
        case dropped
        /// A kind this build does not know.
        case other(String)

        /// The case for a written kind.
        public init(rawValue: String) {
            switch rawValue {
            case "span": self = .span
            case "overdue": self = .overdue
            case "hang": self = .hang
            case "hitch": self = .hitch
            case "note": self = .note
            case "session": self = .session
            case "diagnostic": self = .diagnostic
            case "dropped": self = .dropped
            default: self = .other(rawValue)
            }
        }

        /// The string written.
        public var rawValue: String {
            switch self {
            case .span: "span"
            case .overdue: "overdue"
            case .hang: "hang"
            case .hitch: "hitch"
            case .note: "note"
            case .session: "session"
            case .diagnostic: "diagnostic"
            case .dropped: "dropped"
            case .other(let value): value
            }
        }
    }
}
