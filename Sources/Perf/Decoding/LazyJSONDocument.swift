// The lazy decoder's document: the input validated in one pass, with where each object and array
// ends, so a container a type never reads is skipped without being tokenised again.
package final class LazyJSONDocument {
    let bytes: [UInt8]
    private(set) var root = 0
    /// Objects and arrays in order of their opening byte, and one past each one's closing byte.
    private var containerStarts: [Int] = []
    private var containerEnds: [Int] = []

    /// Perf's files nest a few levels; this bounds the validator's recursion.
    static let maximumDepth = 128

    init(_ bytes: [UInt8]) throws {
        self.bytes = bytes
        var validator = Validator()
        try bytes.withUnsafeBufferPointer { buffer in
            var index = 0
            validator.skipSpace(buffer, &index)
            root = index
            try validator.value(buffer, &index, depth: 0)
            validator.skipSpace(buffer, &index)
            guard index == buffer.count else { throw Self.syntaxError() }
        }
        containerStarts = validator.starts
        containerEnds = validator.ends
    }

    static func syntaxError() -> DecodingError {
        .dataCorrupted(.init(codingPath: [], debugDescription: ReportDecodingError.syntaxError))
    }

    /// One pass over the bytes: the JSON grammar, and where each container ends.
    private struct Validator {
        var starts: [Int] = []
        var ends: [Int] = []

        func skipSpace(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x0A, 0x0D, 0x09: index += 1
                default: return
                }
            }
        }

        mutating func value(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int, depth: Int) throws {
            guard index < bytes.count, depth <= LazyJSONDocument.maximumDepth else { throw syntaxError() }
            switch bytes[index] {
            case UInt8(ascii: "{"): try container(bytes, &index, depth: depth, object: true)
            case UInt8(ascii: "["): try container(bytes, &index, depth: depth, object: false)
            case UInt8(ascii: "\""): try string(bytes, &index)
            case UInt8(ascii: "t"): try literal(bytes, &index, "true")
            case UInt8(ascii: "f"): try literal(bytes, &index, "false")
            case UInt8(ascii: "n"): try literal(bytes, &index, "null")
            default: try number(bytes, &index)
            }
        }

        mutating func container(
            _ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int, depth: Int, object: Bool
        ) throws {
            let slot = starts.count
            starts.append(index)
            ends.append(0)
            let closing = object ? UInt8(ascii: "}") : UInt8(ascii: "]")
            index += 1
            skipSpace(bytes, &index)
            if index < bytes.count, bytes[index] == closing {
                index += 1
                ends[slot] = index
                return
            }
            while true {
                if object {
                    guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw syntaxError() }
                    try string(bytes, &index)
                    skipSpace(bytes, &index)
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw syntaxError() }
                    index += 1
                    skipSpace(bytes, &index)
                }
                try value(bytes, &index, depth: depth + 1)
                skipSpace(bytes, &index)
                guard index < bytes.count else { throw syntaxError() }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    skipSpace(bytes, &index)
                    // JSONDecoder accepts a trailing comma in an array and in an object alike.
                    if index < bytes.count, bytes[index] == closing {
                        index += 1
                        ends[slot] = index
                        return
                    }
                    continue
                }
                guard bytes[index] == closing else { throw syntaxError() }
                index += 1
                ends[slot] = index
                return
            }
        }

        /// Escapes checked. UTF-8 and raw control characters are checked when a string is read,
        /// as JSONDecoder checks them.
        func string(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) throws {
            index += 1
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return
                }
                if byte == UInt8(ascii: "\\") {
                    guard index + 1 < bytes.count else { break }
                    switch bytes[index + 1] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                        UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        index += 2
                    case UInt8(ascii: "u"):
                        guard index + 6 <= bytes.count,
                            (2..<6).allSatisfy({ LazyJSONDocument.hex(bytes[index + $0]) != nil })
                        else { throw syntaxError() }
                        index += 6
                    default: throw syntaxError()
                    }
                    continue
                }
                index += 1
            }
            throw syntaxError()
        }

        /// A number token: `-` or a digit, then digits, signs, points and exponents. As with
        /// JSONDecoder, its grammar is checked when it is read.
        func number(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) throws {
            guard bytes[index] == UInt8(ascii: "-") || bytes[index] &- UInt8(ascii: "0") < 10 else {
                throw syntaxError()
            }
            index += 1
            while index < bytes.count, LazyJSONDocument.isNumberByte(bytes[index]) { index += 1 }
        }

        func literal(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int, _ word: StaticString) throws {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { throw syntaxError() }
            let matches = word.withUTF8Buffer { expected in
                (0..<count).allSatisfy { bytes[index + $0] == expected[$0] }
            }
            guard matches else { throw syntaxError() }
            index += count
        }

        func syntaxError() -> DecodingError { LazyJSONDocument.syntaxError() }
    }

    // MARK: Scanning (on validated bytes)

    func skipSpace(_ index: inout Int) {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    /// The offset of the first byte that is not part of valid UTF-8, or nil when all are.
    package static func firstInvalidUTF8(_ bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBufferPointer { buffer in
            var index = 0
            while index < buffer.count {
                if buffer[index] < 0x80 {
                    index += 1
                    continue
                }
                guard let end = try? utf8SequenceEnd(buffer, index) else { return index }
                index = end
            }
            return nil
        }
    }

    /// One past the UTF-8 sequence whose lead byte (≥ 0x80) is at `index`; throws for a byte that
    /// cannot start one, a missing continuation, an overlong form, a surrogate or a code point
    /// past U+10FFFF (RFC 3629).
    static func utf8SequenceEnd(_ bytes: UnsafeBufferPointer<UInt8>, _ index: Int) throws -> Int {
        let lead = bytes[index]
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: (length, low) = (3, 0xA0)
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: (length, high) = (3, 0x9F)
        case 0xF0: (length, low) = (4, 0x90)
        case 0xF1...0xF3: length = 4
        case 0xF4: (length, high) = (4, 0x8F)
        default: throw syntaxError()
        }
        guard index + length <= bytes.count, (low...high).contains(bytes[index + 1]) else { throw syntaxError() }
        for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 { throw syntaxError() }
        return index + length
    }

    /// One past the string starting at `start` (a quote); escapes checked.
    func stringEnd(_ start: Int) throws -> Int {
        var index = start + 1
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") { return index + 1 }
            if byte == UInt8(ascii: "\\") {
                guard index + 1 < bytes.count else { break }
                switch bytes[index + 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    index += 2
                case UInt8(ascii: "u"):
                    guard index + 6 <= bytes.count, (2..<6).allSatisfy({ Self.hex(bytes[index + $0]) != nil }) else {
                        throw Self.syntaxError()
                    }
                    index += 6
                default: throw Self.syntaxError()
                }
                continue
            }
            index += 1
        }
        throw Self.syntaxError()
    }

    static func isNumberByte(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10 || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+")
            || byte == UInt8(ascii: ".") || byte | 0x20 == UInt8(ascii: "e")
    }

    /// One past the number token starting at `start` (see the validator).
    func numberTokenEnd(_ start: Int) -> Int {
        var index = start + 1
        while index < bytes.count, Self.isNumberByte(bytes[index]) { index += 1 }
        return index
    }

    /// Whether the token at `start` is a JSON number:
    /// `-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?`.
    func isWellFormedNumber(at start: Int) -> Bool {
        (try? numberEnd(start)) == numberTokenEnd(start)
    }

    /// One past the JSON number starting at `start`.
    private func numberEnd(_ start: Int) throws -> Int {
        var index = start
        func digits() -> Int {
            let first = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                index += 1
            }
            return index - first
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        let integerStart = index
        let integerDigits = digits()
        guard integerDigits > 0, integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else {
            throw Self.syntaxError()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw Self.syntaxError() }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard digits() > 0 else { throw Self.syntaxError() }
        }
        return index
    }

    /// One past the value starting at `start`.
    func valueEnd(_ start: Int) -> Int {
        switch bytes[start] {
        case UInt8(ascii: "{"), UInt8(ascii: "["): return containerEnd(start)
        case UInt8(ascii: "\""): return (try? stringEnd(start)) ?? bytes.count
        case UInt8(ascii: "t"), UInt8(ascii: "n"): return start + 4
        case UInt8(ascii: "f"): return start + 5
        default: return numberTokenEnd(start)
        }
    }

    /// One past the object or array opening at `start`.
    func containerEnd(_ start: Int) -> Int {
        var low = 0
        var high = containerStarts.count
        while low < high {
            let middle = (low + high) / 2
            if containerStarts[middle] < start { low = middle + 1 } else { high = middle }
        }
        return low < containerStarts.count && containerStarts[low] == start ? containerEnds[low] : bytes.count
    }

    static func hex(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    // MARK: Values

    /// What the value at `start` is, in JSONDecoder's words.
    func kind(at start: Int) -> String {
        switch bytes[start] {
        case UInt8(ascii: "{"): "a dictionary"
        case UInt8(ascii: "["): "an array"
        case UInt8(ascii: "\""): "a string"
        case UInt8(ascii: "t"), UInt8(ascii: "f"): "bool"
        case UInt8(ascii: "n"): "null"
        default: "number"
        }
    }

    func isNull(at start: Int) -> Bool { bytes[start] == UInt8(ascii: "n") }

    /// The string at `start` (a quote), escapes decoded; nil for invalid UTF-8, a raw control
    /// character or a lone surrogate.
    func string(at start: Int) -> String? {
        guard let end = try? stringEnd(start) else { return nil }
        let body = bytes[(start + 1)..<(end - 1)]
        guard !body.contains(where: { $0 < 0x20 }) else { return nil }
        guard body.contains(UInt8(ascii: "\\")) else { return String(validating: body, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(body.count)
        var index = body.startIndex
        while index < body.endIndex {
            let byte = body[index]
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                index += 1
                continue
            }
            let escape = body[index + 1]
            index += 2
            switch escape {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = unit(body, index)
                index += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    guard index + 6 <= body.endIndex, body[index] == UInt8(ascii: "\\"),
                        body[index + 1] == UInt8(ascii: "u")
                    else { return nil }
                    let low = unit(body, index + 2)
                    guard (0xDC00...0xDFFF).contains(low) else { return nil }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    index += 6
                }
                guard let value = Unicode.Scalar(scalar) else { return nil }
                out.append(contentsOf: Array(String(Character(value)).utf8))
            default: out.append(escape)
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    private func unit(_ body: ArraySlice<UInt8>, _ index: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 << 4 | (Self.hex(body[index + $1]) ?? 0) }
    }

    /// The number token at `start` as written.
    func numberText(at start: Int) -> Substring {
        Substring(decoding: bytes[start..<numberTokenEnd(start)], as: UTF8.self)
    }

    /// The integer at `start` when the number is one that fits `T` exactly (`2.0` and `1e3`
    /// included, as with JSONDecoder).
    func integer<T: FixedWidthInteger>(_ type: T.Type, at start: Int) -> T? {
        // Plain digits, the common case, without making a string.
        var index = start
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        var magnitude: UInt64 = 0
        var overflow = false
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            let (times, carry) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, carry2) = times.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
            overflow = overflow || carry || carry2
            magnitude = sum
            index += 1
        }
        let digits = index - start - (negative ? 1 : 0)
        let plain = index >= bytes.count || !Self.isNumberByte(bytes[index])
        if plain, digits > 0, digits == 1 || bytes[index - digits] != UInt8(ascii: "0") {
            guard !overflow else { return nil }
            if negative {
                guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
                return magnitude == UInt64(Int64.max) + 1 ? T(exactly: Int64.min) : T(exactly: -Int64(magnitude))
            }
            return T(exactly: magnitude)
        }
        guard isWellFormedNumber(at: start), let double = Double(numberText(at: start)), double == double.rounded()
        else { return nil }
        return T(exactly: double)
    }
}
