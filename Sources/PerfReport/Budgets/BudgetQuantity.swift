import Foundation
// Unit strings of the budgets file: "250ms", "1.5s", "800us", "10%"; bare JSON numbers are
// counts. A unit is never guessed: a time written without one is an error, not a count.
import Perf

/// A number with its unit, as the budgets file writes it.
///
/// ```swift
/// BudgetQuantity(parsing: "1.5s")   // 1500 ms
/// BudgetQuantity(parsing: "10%")    // 10 percent
/// ```
public struct BudgetQuantity: Sendable, Equatable, CustomStringConvertible {
    /// What a quantity measures.
    public enum Unit: String, Sendable, Equatable {
        /// A number of things (calls, hangs, ledger lines): a bare JSON number.
        case count
        /// A duration, held in milliseconds: `"250ms"`, `"1.5s"`, `"800us"`.
        case milliseconds
        /// A percentage: `"10%"`.
        case percent
    }

    /// The unit.
    public var unit: Unit
    /// The value in the unit (milliseconds for durations, percentage points for percents).
    public var value: Double

    /// Creates a quantity.
    public init(_ value: Double, _ unit: Unit) {
        self.value = value
        self.unit = unit
    }

    /// Parses a unit string (`"250ms"`, `"1.5s"`, `"800us"`, `"10%"`); nil when it is not one.
    ///
    /// A string without a unit is not a count: counts are bare JSON numbers.
    public init?(parsing text: String) {
        let suffixes: [(String, Unit, Double)] = [
            ("ms", .milliseconds, 1), ("us", .milliseconds, 0.001), ("µs", .milliseconds, 0.001),
            ("s", .milliseconds, 1000), ("%", .percent, 1),
        ]
        for (suffix, unit, scale) in suffixes where text.hasSuffix(suffix) {
            let digits = text.dropLast(suffix.count)
            // Only plain decimals: Double("nan"), "inf" and "0x1p3" parse too, and mean nothing here.
            guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
                let number = Double(digits), number.isFinite
            else { return nil }
            self.init(number * scale, unit)
            return
        }
        return nil
    }

    /// Parses a JSON value: a unit string, or a bare non-negative number as a count.
    init?(json: Any) {
        if let text = json as? String {
            self.init(parsing: text)
        } else if let number = BudgetsReader.number(json), number >= 0 {
            self.init(number, .count)
        } else {
            return nil
        }
    }

    /// The quantity as the budgets file would write it: `800ms`, `1.5s`, `10%`, `200`.
    public var description: String { Self.format(value, unit) }

    /// A value in `unit`, written the way the budgets file writes it.
    public static func format(_ value: Double, _ unit: Unit) -> String {
        switch unit {
        case .count: return trimmed(value)
        case .percent: return trimmed(value) + "%"
        case .milliseconds:
            if abs(value) >= 1000 { return trimmed(value / 1000) + "s" }
            if value != 0, abs(value) < 1 { return trimmed(value * 1000) + "us" }
            return trimmed(value) + "ms"
        }
    }

    /// At most three decimals, none when the value is whole.
    static func trimmed(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 1000
        if rounded == rounded.rounded(), abs(rounded) < 1e15 { return String(Int64(rounded)) }
        var text = String(format: "%.3f", rounded)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }
}
