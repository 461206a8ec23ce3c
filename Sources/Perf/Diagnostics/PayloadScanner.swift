// Finds the top-level members of a payload without parsing their values, so a reader that only
// wants the process figures skips the histograms (most of a payload's bytes) at scanning speed.
//
// Only the structure is checked here (strings, escapes, brackets); each member is parsed by a
// real decoder afterwards, which rejects anything else.

enum PayloadScanner {
    /// The top-level members of a JSON object: each key (as written, escapes not decoded) and
    /// the byte range of its value; `nil` when the bytes are not one well-nested object.
    static func members(_ bytes: [UInt8]) -> [(key: String, value: Range<Int>)]? {
        var index = 0
        func skipSpace() {
            while index < bytes.count,
                bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09
            {
                index += 1
            }
        }
        /// Moves past a string starting at `index` (a quote); false if unterminated.
        func skipString() -> Bool {
            index += 1
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\\"): index += 2
                case UInt8(ascii: "\""):
                    index += 1
                    return true
                default: index += 1
                }
            }
            return false
        }
        /// Moves past one value (any JSON value, nested to any depth); false if malformed.
        func skipValue() -> Bool {
            var depth = 0
            repeat {
                skipSpace()
                guard index < bytes.count else { return false }
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    guard skipString() else { return false }
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                    index += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    index += 1
                    guard depth >= 0 else { return false }
                default:
                    index += 1
                }
            } while depth > 0
            return true
        }
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        var found: [(key: String, value: Range<Int>)] = []
        while true {
            skipSpace()
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: "}") { break }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                skipSpace()
            }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            let keyStart = index
            guard skipString() else { return nil }
            let key = String(decoding: bytes[(keyStart + 1)..<(index - 1)], as: UTF8.self)
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
            index += 1
            skipSpace()
            let valueStart = index
            // A scalar ends at the next ',' or '}' of this level; skipValue steps over one token
            // character at a time, so finish scalars here.
            if index < bytes.count, bytes[index] != UInt8(ascii: "{"), bytes[index] != UInt8(ascii: "["),
                bytes[index] != UInt8(ascii: "\"")
            {
                while index < bytes.count, bytes[index] != UInt8(ascii: ","), bytes[index] != UInt8(ascii: "}") {
                    index += 1
                }
            } else {
                guard skipValue() else { return nil }
            }
            found.append((key, valueStart..<index))
        }
        return found
    }
}
