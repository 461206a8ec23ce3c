// A tiny JSON value with one deterministic serialisation: keys in byte order, integers without a
// fraction, doubles in Swift's shortest round-tripping form. Reports and diagnostic payloads use
// it so the same input always gives the same bytes (JSONSerialization promises neither).

/// A JSON value as Perf writes it.
package enum ReportJSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([ReportJSON])
    case object([String: ReportJSON])
    /// Bytes that are already one valid, compact JSON value (a ledger line, a histogram).
    case raw([UInt8])

    /// A number in milliseconds from nanoseconds, exact to the nanosecond and in plain decimal
    /// notation: `20`, `100.139`, `0.000025` (25 ns; rounding to microseconds made it 0, and a
    /// double would print `2.5e-05`). Up to six decimals, trailing zeros dropped.
    package static func ms(nanos: UInt64) -> ReportJSON {
        var out: [UInt8] = []
        writeInteger(nanos / 1_000_000, into: &out)
        var fraction = nanos % 1_000_000
        guard fraction > 0 else { return .raw(out) }
        var digits = 6
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        out.append(UInt8(ascii: "."))
        var text: [UInt8] = []
        writeInteger(fraction, into: &text)
        out.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: digits - text.count))
        out.append(contentsOf: text)
        return .raw(out)
    }

    private static func writeInteger(_ value: UInt64, into out: inout [UInt8]) {
        let start = out.count
        var magnitude = value
        repeat {
            out.insert(UInt8(ascii: "0") + UInt8(magnitude % 10), at: start)
            magnitude /= 10
        } while magnitude > 0
    }

    /// An optional string, `null` when absent.
    package static func optional(_ value: String?) -> ReportJSON { value.map(ReportJSON.string) ?? .null }

    /// The compact serialisation.
    package var bytes: [UInt8] {
        var out: [UInt8] = []
        write(into: &out)
        return out
    }

    /// Appends the compact serialisation to `out`.
    package func write(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
        case .int(let value): LedgerEncoder.writeInteger(value, into: &out)
        case .double(let value):
            // NaN and infinities are not JSON; they cannot come from a valid input, so write null.
            if value.isFinite {
                LedgerEncoder.appendDouble(value, into: &out)
            } else {
                out.append(contentsOf: "null".utf8)
            }
        case .string(let value): LedgerEncoder.appendQuoted(value, into: &out)
        case .raw(let bytes): out.append(contentsOf: bytes)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                item.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            // Byte order of the UTF-8 keys, the order every Perf file uses.
            let sorted = members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            for (index, member) in sorted.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                LedgerEncoder.appendQuoted(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                member.value.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }
}
