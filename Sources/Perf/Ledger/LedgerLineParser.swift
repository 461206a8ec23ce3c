// A tolerant parser for one ledger line: one flat JSON object, never a crash on any bytes.

/// Parses one line of `perf-events.jsonl` into an event, or returns nil.
///
/// Written by hand rather than with JSONSerialization so that no input can crash or stall it:
/// nesting depth is bounded, strings must be valid UTF-8, every index is checked. Values a
/// ledger line may hold (strings, numbers, booleans, arrays of strings) are kept; nested objects
/// or mixed arrays under unknown keys are skipped; `null` means absent.
enum LedgerLineParser {
    /// Deeper nesting than this makes the line malformed instead of recursing further.
    static let maximumDepth = 32

    enum Value: Equatable {
        case string(String)
        case int(Int64)
        case double(Double)
        case bool(Bool)
        case strings([String])
        case null
        /// A nested object or a mixed array: valid JSON, but not a ledger value.
        case other
    }

    /// The key-value pairs of a line that is exactly one JSON object (surrounding whitespace
    /// allowed), or nil.
    static func parseObject(_ bytes: UnsafeBufferPointer<UInt8>) -> [String: Value]? {
        var cursor = Cursor(bytes: bytes)
        cursor.skipWhitespace()
        guard let object = cursor.parseObject(depth: 0) else { return nil }
        cursor.skipWhitespace()
        return cursor.atEnd ? object : nil
    }

    private struct Cursor {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        var atEnd: Bool { index >= bytes.count }

        func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        mutating func consume(_ byte: UInt8) -> Bool {
            guard peek() == byte else { return false }
            index += 1
            return true
        }

        mutating func consume(literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] { return false }
            index += count
            return true
        }

        mutating func parseObject(depth: Int) -> [String: Value]? {
            guard depth < LedgerLineParser.maximumDepth, consume(UInt8(ascii: "{")) else { return nil }
            var object: [String: Value] = [:]
            skipWhitespace()
            if consume(UInt8(ascii: "}")) { return object }
            while true {
                skipWhitespace()
                guard let key = parseString() else { return nil }
                skipWhitespace()
                guard consume(UInt8(ascii: ":")) else { return nil }
                skipWhitespace()
                guard let value = parseValue(depth: depth + 1) else { return nil }
                object[key] = value
                skipWhitespace()
                if consume(UInt8(ascii: ",")) { continue }
                if consume(UInt8(ascii: "}")) { return object }
                return nil
            }
        }

        mutating func parseValue(depth: Int) -> Value? {
            guard depth < LedgerLineParser.maximumDepth, let byte = peek() else { return nil }
            switch byte {
            case UInt8(ascii: "\""): return parseString().map(Value.string)
            case UInt8(ascii: "{"): return parseObject(depth: depth) == nil ? nil : .other
            case UInt8(ascii: "["): return parseArray(depth: depth)
            case UInt8(ascii: "t"): return consume(literal: "true") ? .bool(true) : nil
            case UInt8(ascii: "f"): return consume(literal: "false") ? .bool(false) : nil
            case UInt8(ascii: "n"): return consume(literal: "null") ? .null : nil
            default: return parseNumber()
            }
        }

        mutating func parseArray(depth: Int) -> Value? {
            guard consume(UInt8(ascii: "[")) else { return nil }
            var strings: [String] = []
            var allStrings = true
            skipWhitespace()
            if consume(UInt8(ascii: "]")) { return .strings([]) }
            while true {
                skipWhitespace()
                guard let element = parseValue(depth: depth + 1) else { return nil }
                if case .string(let string) = element { strings.append(string) } else { allStrings = false }
                skipWhitespace()
                if consume(UInt8(ascii: ",")) { continue }
                if consume(UInt8(ascii: "]")) { return allStrings ? .strings(strings) : .other }
                return nil
            }
        }

        /// JSON's number grammar exactly; integers that fit stay integers.
        mutating func parseNumber() -> Value? {
            let start = index
            _ = consume(UInt8(ascii: "-"))
            guard let first = peek(), isDigit(first) else { return nil }
            index += 1
            if first != UInt8(ascii: "0") { skipDigits() }
            var integral = true
            if consume(UInt8(ascii: ".")) {
                integral = false
                guard skipDigits() > 0 else { return nil }
            }
            if consume(UInt8(ascii: "e")) || consume(UInt8(ascii: "E")) {
                integral = false
                if !consume(UInt8(ascii: "+")) { _ = consume(UInt8(ascii: "-")) }
                guard skipDigits() > 0 else { return nil }
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            if integral, let integer = Int64(text) { return .int(integer) }
            guard let number = Double(text), number.isFinite else { return nil }
            return .double(number)
        }

        @discardableResult
        mutating func skipDigits() -> Int {
            let start = index
            while let byte = peek(), isDigit(byte) { index += 1 }
            return index - start
        }

        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

        /// A JSON string: escapes decoded (surrogate pairs joined), raw control bytes and invalid
        /// UTF-8 rejected.
        mutating func parseString() -> String? {
            guard consume(UInt8(ascii: "\"")) else { return nil }
            var decoded: [UInt8] = []
            while let byte = peek() {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(validating: decoded, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard let escaped = peek() else { return nil }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escaped)
                    case UInt8(ascii: "b"): decoded.append(0x08)
                    case UInt8(ascii: "f"): decoded.append(0x0C)
                    case UInt8(ascii: "n"): decoded.append(0x0A)
                    case UInt8(ascii: "r"): decoded.append(0x0D)
                    case UInt8(ascii: "t"): decoded.append(0x09)
                    case UInt8(ascii: "u"):
                        guard let scalar = parseUnicodeEscape() else { return nil }
                        decoded.append(contentsOf: String(Character(scalar)).utf8)
                    default: return nil
                    }
                case 0..<0x20:
                    return nil
                default:
                    decoded.append(byte)
                }
            }
            return nil
        }

        /// After `\u`: four hex digits, joined with a following `\uDC00–\uDFFF` when a high
        /// surrogate; a lone surrogate is rejected.
        mutating func parseUnicodeEscape() -> Unicode.Scalar? {
            guard let high = parseHex4() else { return nil }
            if (0xD800..<0xDC00).contains(high) {
                guard consume(UInt8(ascii: "\\")), consume(UInt8(ascii: "u")), let low = parseHex4(),
                    (0xDC00..<0xE000).contains(low)
                else { return nil }
                return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
            }
            return Unicode.Scalar(high)
        }

        mutating func parseHex4() -> UInt32? {
            guard index + 4 <= bytes.count else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                index += 1
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                value = value << 4 | UInt32(digit)
            }
            return value
        }
    }
}
