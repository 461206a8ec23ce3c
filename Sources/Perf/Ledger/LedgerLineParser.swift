// A tolerant parser for one ledger line: one JSON object, never a crash on any bytes.
import PerfCore

/// Parses one line of `perf-events.jsonl` into an event, or returns nil.
///
/// The line is validated by ``JSONScanner``, the package's one JSON reader, so no input can crash
/// or stall it and the rules are those of every other JSON the package reads: RFC 8259 strictly
/// (a trailing comma makes the line malformed), nesting bounded, strings valid UTF-8. Values a
/// ledger line may hold (strings, numbers, booleans, arrays of strings, objects of such values
/// and arrays of objects) are kept; mixed arrays are skipped; `null` means absent.
enum LedgerLineParser {
    /// A value nested this deep makes the line malformed.
    static let maximumDepth = 32

    enum Value: Equatable {
        case string(String)
        case int(Int64)
        case double(Double)
        case bool(Bool)
        case strings([String])
        indirect case object([String: Value])
        indirect case objects([[String: Value]])
        case null
        /// A mixed array: valid JSON, but not a ledger value.
        case other
    }

    /// The key-value pairs of a line that is exactly one JSON object (surrounding whitespace
    /// allowed), or nil. A later duplicate key wins.
    static func parseObject(_ bytes: UnsafeBufferPointer<UInt8>) -> [String: Value]? {
        guard let scanner = try? JSONScanner(bytes, maximumDepth: maximumDepth),
            bytes[scanner.root] == UInt8(ascii: "{")
        else { return nil }
        return Walker(bytes: bytes, scanner: scanner).object(at: scanner.root)
    }

    /// Reads the validated line. Nested values are read too, so that one the ledger cannot hold
    /// anywhere (a surrogate escape without its pair, a number past Double's range) makes the
    /// line malformed wherever it is.
    private struct Walker {
        let bytes: UnsafeBufferPointer<UInt8>
        let scanner: JSONScanner

        func object(at start: Int) -> [String: Value]? {
            var object: [String: Value] = [:]
            for (name, start) in scanner.children(bytes, of: start) {
                guard let name, let key = JSONScanner.string(bytes, at: name), let value = value(at: start) else {
                    return nil
                }
                object[key] = value
            }
            return object
        }

        func value(at start: Int) -> Value? {
            switch bytes[start] {
            case UInt8(ascii: "\""): return JSONScanner.string(bytes, at: start).map(Value.string)
            case UInt8(ascii: "{"): return object(at: start).map(Value.object)
            case UInt8(ascii: "["):
                var strings: [String] = []
                var objects: [[String: Value]] = []
                var others = 0
                for (_, element) in scanner.children(bytes, of: start) {
                    switch value(at: element) {
                    case nil: return nil
                    case .string(let string)?: strings.append(string)
                    case .object(let object)?: objects.append(object)
                    default: others += 1
                    }
                }
                if others == 0, objects.isEmpty { return .strings(strings) }
                return others == 0 && strings.isEmpty ? .objects(objects) : .other
            case UInt8(ascii: "t"): return .bool(true)
            case UInt8(ascii: "f"): return .bool(false)
            case UInt8(ascii: "n"): return .null
            default: return number(at: start)
            }
        }

        /// Integers that fit stay integers; other numbers must be finite doubles.
        func number(at start: Int) -> Value? {
            let token = UnsafeBufferPointer(rebasing: bytes[start..<JSONScanner.numberEnd(bytes, start)])
            let text = String(decoding: token, as: UTF8.self)
            let integral = !token.contains { $0 == UInt8(ascii: ".") || $0 | 0x20 == UInt8(ascii: "e") }
            if integral, let integer = Int64(text) { return .int(integer) }
            guard let number = Double(text), number.isFinite else { return nil }
            return .double(number)
        }
    }
}
