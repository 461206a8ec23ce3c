// How the html export writes durations, times, sizes and counts: readable, short and the same
// on every machine (no locale, no time zone).
import Perf

extension HTMLExport {
    /// `25ns`, `830µs`, `12.5ms`, `1.52s`, `10m 5s`: three significant digits, enough to compare
    /// at a glance (the report keeps the exact figures, to the nanosecond).
    static func duration(ms: Double) -> String {
        guard ms.isFinite else { return "–" }
        let sign = ms < 0 ? "-" : ""
        let magnitude = min(abs(ms), 1e18)
        if magnitude >= 3_600_000 {
            let minutes = Int64(magnitude / 60_000)
            return sign + "\(minutes / 60)h" + (minutes % 60 == 0 ? "" : " \(minutes % 60)m")
        }
        if magnitude >= 60_000 {
            let seconds = Int64(magnitude / 1000)
            return sign + "\(seconds / 60)m" + (seconds % 60 == 0 ? "" : " \(seconds % 60)s")
        }
        let (value, unit) =
            magnitude >= 999.5
            ? (magnitude / 1000, "s")
            : magnitude >= 0.9995 || magnitude == 0
                ? (magnitude, "ms") : magnitude >= 0.0009995 ? (magnitude * 1000, "µs") : (magnitude * 1_000_000, "ns")
        let decimals = value >= 99.95 ? 0 : value >= 9.995 ? 1 : 2
        var text = String(format: "%.\(decimals)f", value)
        if text.contains(".") {
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
        }
        return sign + text + unit
    }

    /// A duration given in nanoseconds.
    static func duration(nanos: Int64) -> String { duration(ms: Double(nanos) / 1e6) }

    /// `2026-12-02 13:00:00.123Z` for Unix nanoseconds.
    static func time(unixNanos: Int64) -> String {
        var bytes: [UInt8] = []
        LedgerTimestamp.appendISO8601(millisecondsSinceEpoch: unixNanos / 1_000_000, into: &bytes)
        return String(decoding: bytes, as: UTF8.self).replacingAll("T", " ")
    }

    /// `1.5 GiB`, `320 MiB`, `12 KiB`.
    static func bytes(_ count: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while abs(value) >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return BudgetQuantity.trimmed((value * 10).rounded() / 10) + " " + units[unit]
    }

    /// `12,345`: digits grouped by thousands.
    static func count(_ value: Int64) -> String {
        let digits = String(value.magnitude)
        var grouped = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { grouped += "," }
            grouped.append(digit)
        }
        return (value < 0 ? "-" : "") + grouped
    }

    /// `1 span` / `3 spans`.
    static func plural(_ value: Int, _ noun: String) -> String { plural(Int64(value), noun) }

    /// `1 call` / `3 calls`, for 64-bit counts.
    static func plural(_ value: Int64, _ noun: String) -> String {
        count(value) + " " + noun + (value == 1 ? "" : "s")
    }
}
