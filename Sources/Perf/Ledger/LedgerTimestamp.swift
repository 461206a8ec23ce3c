// ISO-8601 UTC timestamps with milliseconds ("2026-12-02T13:00:00.123Z"), both directions.

/// Formats and parses the ledger's `ts` without Foundation's date formatters, which allocate and
/// consult time zones on every call.
package enum LedgerTimestamp {
    private static let millisecondsPerDay: Int64 = 86_400_000

    /// Appends `YYYY-MM-DDTHH:MM:SS.mmmZ` for a wall time in milliseconds since the epoch.
    package static func appendISO8601(millisecondsSinceEpoch ms: Int64, into out: inout [UInt8]) {
        let (days, msOfDay) = floorDivision(ms, millisecondsPerDay)
        let (year, month, day) = civil(fromDays: days)
        // Built in a 24-byte buffer on the stack (`YYYY-MM-DDTHH:MM:SS.mmmZ` is 24) and appended
        // once, rather than in 14 appends that each check the array's capacity.
        var text: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &text) { buffer in
            var at = 0
            func put(_ value: Int64, digits: Int) {
                var remaining = max(0, value)
                for place in stride(from: at + digits - 1, through: at, by: -1) {
                    buffer[place] = UInt8(ascii: "0") + UInt8(remaining % 10)
                    remaining /= 10
                }
                at += digits
            }
            func put(_ byte: UInt8) {
                buffer[at] = byte
                at += 1
            }
            put(year, digits: 4)
            put(UInt8(ascii: "-"))
            put(month, digits: 2)
            put(UInt8(ascii: "-"))
            put(day, digits: 2)
            put(UInt8(ascii: "T"))
            put(msOfDay / 3_600_000, digits: 2)
            put(UInt8(ascii: ":"))
            put(msOfDay / 60_000 % 60, digits: 2)
            put(UInt8(ascii: ":"))
            put(msOfDay / 1000 % 60, digits: 2)
            put(UInt8(ascii: "."))
            put(msOfDay % 1000, digits: 3)
            put(UInt8(ascii: "Z"))
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[..<at]))
        }
    }

    /// Parses exactly the form ``appendISO8601(millisecondsSinceEpoch:into:)`` writes (the
    /// fraction may have 0–9 digits); nil for anything else.
    package static func parseISO8601(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z") else { return nil }
        func number(_ start: Int, _ count: Int) -> Int64? {
            var value: Int64 = 0
            for index in start..<(start + count) {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
            let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var millis: Int64 = 0
        if bytes.count > 20 {
            let fractionDigits = bytes.count - 21
            guard bytes[19] == UInt8(ascii: "."), (1...9).contains(fractionDigits),
                let fraction = number(20, fractionDigits)
            else { return nil }
            millis = fractionDigits >= 3 ? fraction / pow10(fractionDigits - 3) : fraction * pow10(3 - fractionDigits)
        }
        let days = days(fromCivil: year, month, day)
        return days * millisecondsPerDay + hour * 3_600_000 + minute * 60_000 + second * 1000 + millis
    }

    private static func pow10(_ exponent: Int) -> Int64 {
        (0..<exponent).reduce(1) { result, _ in result * 10 }
    }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let quotient = value >= 0 ? value / divisor : (value - divisor + 1) / divisor
        return (quotient, value - quotient * divisor)
    }

    /// Howard Hinnant's `civil_from_days`: proleptic Gregorian calendar, no tables, no locale.
    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Hinnant's `days_from_civil`, the inverse of ``civil(fromDays:)``.
    private static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
