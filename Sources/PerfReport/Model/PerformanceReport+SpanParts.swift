// What an over-budget span line says beyond its duration: the children it spent its time in, its
// own time, the scope ids that tie a child's line to its parent's, and the sampler's profile.
// Read from the line's open keys; a value of the wrong shape reads as absent, never as an error.
import Perf
import PerfCore

extension PerformanceReport {
    /// One entry of a span line's `children`: the spans of one name that began and ended inside it.
    public struct SpanChild: Sendable, Equatable {
        /// The child span's name (`other` for the names folded past the first eight).
        public var name: String
        /// How many of them ran.
        public var count: Int64
        /// Their durations, summed, in milliseconds.
        public var totalMs: Double
        /// The longest of them, in milliseconds.
        public var maxMs: Double

        /// Creates a children entry.
        public init(name: String, count: Int64, totalMs: Double, maxMs: Double) {
            self.name = name
            self.count = count
            self.totalMs = totalMs
            self.maxMs = maxMs
        }

        /// The entry as a ledger line writes it.
        package var ledgerValue: [String: LedgerValue] {
            ["name": .string(name), "count": .int(count), "totalMs": .double(totalMs), "maxMs": .double(maxMs)]
        }
    }
}

extension PerformanceReport.Event {
    /// The line's `children`, heaviest first as written; an entry without a name, a count or
    /// finite times is skipped, and a `children` that is not an array of objects reads as none.
    public var children: [PerformanceReport.SpanChild] {
        guard case .objects(let entries)? = line.extra["children"] else { return [] }
        return entries.compactMap { entry in
            guard case .string(let name)? = entry["name"], case .int(let count)? = entry["count"], count >= 0,
                let total = Self.number(entry["totalMs"]), let maximum = Self.number(entry["maxMs"])
            else { return nil }
            return PerformanceReport.SpanChild(name: name, count: count, totalMs: total, maxMs: maximum)
        }
    }

    /// The span's time outside its children (`selfMs`), in milliseconds, when the line has it.
    public var selfMs: Double? { Self.number(line.extra["selfMs"]) }

    /// This span's parent-scope id (`scope`), present when it had children: unique within its
    /// session, so a child's ``parentScope`` names this line.
    public var scope: Int64? {
        guard case .int(let value)? = line.extra["scope"] else { return nil }
        return value
    }

    /// The `scope` of the parent this span began in (`parentScope`), when it had one.
    public var parentScope: Int64? {
        guard case .int(let value)? = line.extra["parentScope"] else { return nil }
        return value
    }

    /// What the span sampler saw while the span was over budget (`profile`); `nil` when the line
    /// has none or one of the wrong shape.
    public var profile: SpanProfile? { line.profile }

    /// A finite, non-negative number of milliseconds.
    static func number(_ value: LedgerValue?) -> Double? {
        let number: Double
        switch value {
        case .int(let integer)?: number = Double(integer)
        case .double(let double)?: number = double
        default: return nil
        }
        return number.isFinite && number >= 0 ? number : nil
    }
}
