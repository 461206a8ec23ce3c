// The scanner's one pass: RFC 8259's grammar byte by byte, every index checked before it is read.

extension JSONScanner {
    struct Pass {
        let bytes: UnsafeBufferPointer<UInt8>
        let maximumDepth: Int
        var index = 0
        var starts: [Int] = []
        var ends: [Int] = []

        init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int) {
            (self.bytes, self.maximumDepth) = (bytes, maximumDepth)
        }

        func error(_ kind: JSONSyntaxError.Kind, _ problem: String, at offset: Int? = nil) -> JSONSyntaxError {
            JSONSyntaxError(kind, at: offset ?? index, in: bytes, problem)
        }

        func truncated(_ inside: String) -> JSONSyntaxError {
            error(.truncated, "the text ends inside \(inside)")
        }

        /// The byte at `index`, as a message names it.
        var found: String {
            guard index < bytes.count else { return "the end of the text" }
            let byte = bytes[index]
            return (0x21..<0x7F).contains(byte)
                ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x" + String(byte, radix: 16, uppercase: true)
        }

        mutating func value(depth: Int) throws(JSONSyntaxError) {
            guard index < bytes.count else { throw truncated("a value") }
            guard depth < maximumDepth else {
                throw error(.grammar, "a value nested more than \(maximumDepth - 1) deep")
            }
            switch bytes[index] {
            case UInt8(ascii: "{"): try container(depth: depth, closer: UInt8(ascii: "}"))
            case UInt8(ascii: "["): try container(depth: depth, closer: UInt8(ascii: "]"))
            case UInt8(ascii: "\""): try string()
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
            default: throw error(.grammar, "expected a value, found \(found)")
            }
        }

        mutating func container(depth: Int, closer: UInt8) throws(JSONSyntaxError) {
            let object = closer == UInt8(ascii: "}")
            let name = object ? "an object" : "an array"
            let slot = starts.count
            starts.append(index)
            ends.append(0)
            index += 1
            JSONScanner.skipSpace(bytes, &index)
            if index < bytes.count, bytes[index] == closer {
                index += 1
                ends[slot] = index
                return
            }
            while true {
                if object {
                    guard index < bytes.count else { throw truncated(name) }
                    guard bytes[index] == UInt8(ascii: "\"") else {
                        throw error(.grammar, "expected a member name in double quotes, found \(found)")
                    }
                    try string()
                    JSONScanner.skipSpace(bytes, &index)
                    guard index < bytes.count else { throw truncated(name) }
                    guard bytes[index] == UInt8(ascii: ":") else {
                        throw error(.grammar, "expected ':' after a member name, found \(found)")
                    }
                    index += 1
                    JSONScanner.skipSpace(bytes, &index)
                }
                try value(depth: depth + 1)
                JSONScanner.skipSpace(bytes, &index)
                guard index < bytes.count else { throw truncated(name) }
                switch bytes[index] {
                case UInt8(ascii: ","):
                    let comma = index
                    index += 1
                    JSONScanner.skipSpace(bytes, &index)
                    if index < bytes.count, bytes[index] == UInt8(ascii: "]") || bytes[index] == UInt8(ascii: "}") {
                        throw error(
                            .trailingComma,
                            "a trailing comma before '\(Character(Unicode.Scalar(bytes[index])))', which JSON does "
                                + "not allow; remove it", at: comma)
                    }
                case closer:
                    index += 1
                    ends[slot] = index
                    return
                default:
                    throw error(.grammar, "expected ',' or '\(Character(Unicode.Scalar(closer)))', found \(found)")
                }
            }
        }

        /// A string: JSON's escapes only, no raw control character, valid UTF-8.
        mutating func string() throws(JSONSyntaxError) {
            index += 1
            while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return
                case UInt8(ascii: "\\"):
                    try escape()
                case 0..<0x20:
                    throw error(.grammar, "a raw control character (\(found)) in a string; write it as an escape")
                case 0x80...:
                    guard let end = JSONScanner.utf8SequenceEnd(bytes, index) else {
                        throw error(.invalidUTF8, "invalid UTF-8 in a string")
                    }
                    index = end
                default:
                    index += 1
                }
            }
            throw truncated("a string")
        }

        /// After a backslash: `"`, `\`, `/`, `b`, `f`, `n`, `r`, `t`, or `u` and four hex digits.
        mutating func escape() throws(JSONSyntaxError) {
            let backslash = index
            index += 1
            guard index < bytes.count else { throw truncated("a string") }
            switch bytes[index] {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                index += 1
            case UInt8(ascii: "u"):
                index += 1
                for _ in 0..<4 {
                    guard index < bytes.count else { throw truncated("a string") }
                    guard JSONScanner.hex(bytes[index]) != nil else {
                        throw error(.grammar, "'\\u' needs four hex digits", at: backslash)
                    }
                    index += 1
                }
            default:
                throw error(.grammar, "'\\' then \(found) is not an escape JSON has", at: backslash)
            }
        }

        /// `-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?`
        mutating func number() throws(JSONSyntaxError) {
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            let integer = index
            try digits(after: "'-'")
            guard bytes[integer] != UInt8(ascii: "0") || index - integer == 1 else {
                throw error(.grammar, "a number with a leading zero", at: integer)
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                try digits(after: "'.'")
            }
            if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                    index += 1
                }
                try digits(after: "an exponent's 'e'")
            }
        }

        /// One or more digits.
        mutating func digits(after what: String) throws(JSONSyntaxError) {
            guard index < bytes.count else { throw truncated("a number") }
            guard isDigit(bytes[index]) else { throw error(.grammar, "a number needs digits after \(what)") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }

        func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

        mutating func literal(_ word: StaticString) throws(JSONSyntaxError) {
            let start = index
            for offset in 0..<word.utf8CodeUnitCount {
                guard index < bytes.count else { throw truncated("'\(word)'") }
                guard bytes[index] == word.utf8Start[offset] else {
                    index = start
                    throw error(.grammar, "expected a value, found \(found)")
                }
                index += 1
            }
        }
    }
}
