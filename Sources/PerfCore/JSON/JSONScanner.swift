// The one validating pass every JSON reader of the package stands on: the ledger's line parser
// and the lazy decoder walk what it validated; reports, budgets, session index records and
// histogram JSON are checked by it before they are decoded. It checks RFC 8259 strictly and
// remembers where each object and array ends, so readers walk the bytes without checking them
// again.

/// Where a JSON text stops being JSON: the byte offset, its line and column, and what is wrong.
package struct JSONSyntaxError: Error, Equatable, CustomStringConvertible {
    package enum Kind: Equatable, Sendable {
        /// The text ends inside a value.
        case truncated
        /// A comma right before `]` or `}`.
        case trailingComma
        /// Bytes in a string that are not UTF-8.
        case invalidUTF8
        /// Anything else the grammar does not allow.
        case grammar
    }

    package let kind: Kind
    package let offset: Int
    /// 1-based; lines end at `\n`.
    package let line: Int
    /// 1-based, counted in Unicode scalars.
    package let column: Int
    package let problem: String

    package var description: String { "line \(line), column \(column): \(problem)" }

    package init(_ kind: Kind, at offset: Int, in bytes: UnsafeBufferPointer<UInt8>, _ problem: String) {
        var line = 1
        var column = 1
        // A UTF-8 continuation byte belongs to the scalar already counted.
        for byte in bytes[..<min(offset, bytes.count)] {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        (self.kind, self.offset, self.line, self.column, self.problem) = (kind, offset, line, column, problem)
    }
}

/// A JSON text checked in one pass, with where each object and array ends.
///
/// The rules, one set for every reader: exactly one value, whitespace around it allowed; no comma
/// before `]` or `}` (RFC 8259 has none, so `[1,]` and `{"a":1,}` are errors); numbers in JSON's
/// grammar; strings of valid UTF-8 with no raw control character and only JSON's escapes (`\u`
/// takes four hex digits; whether a surrogate escape has its pair is checked when the string is
/// decoded); values nested at most `maximumDepth` deep. Every index is checked: no input traps
/// or stalls it, and its time is linear in the input.
package struct JSONScanner: Sendable {
    /// Perf's files nest a few levels; this bounds the recursion.
    package static let defaultMaximumDepth = 128

    /// Where the one value starts.
    package let root: Int
    /// Objects and arrays in order of their opening byte, and one past each one's closing byte.
    private let starts: [Int]
    private let ends: [Int]

    /// Validates `bytes`; a value inside `maximumDepth` objects and arrays is an error.
    package init(
        _ bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int = defaultMaximumDepth
    ) throws(JSONSyntaxError) {
        var pass = Pass(bytes: bytes, maximumDepth: maximumDepth)
        Self.skipSpace(bytes, &pass.index)
        root = pass.index
        try pass.value(depth: 0)
        Self.skipSpace(bytes, &pass.index)
        guard pass.index == bytes.count else {
            throw pass.error(.grammar, "\(pass.found) after the end of the value")
        }
        (starts, ends) = (pass.starts, pass.ends)
    }

    /// Validates an array's bytes.
    package init(_ bytes: [UInt8], maximumDepth: Int = defaultMaximumDepth) throws(JSONSyntaxError) {
        let result = bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(JSONSyntaxError) in try JSONScanner(buffer, maximumDepth: maximumDepth) }
        }
        self = try result.get()
    }

    // MARK: Reading validated bytes

    /// One past the object or array opening at `start`; `count` if none opens there.
    package func containerEnd(_ start: Int, count: Int) -> Int {
        var low = 0
        var high = starts.count
        while low < high {
            let middle = (low + high) / 2
            if starts[middle] < start { low = middle + 1 } else { high = middle }
        }
        return low < starts.count && starts[low] == start ? ends[low] : count
    }

    /// One past the value starting at `start`.
    package func valueEnd(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int) -> Int {
        switch bytes[start] {
        case UInt8(ascii: "{"), UInt8(ascii: "["): containerEnd(start, count: bytes.count)
        case UInt8(ascii: "\""): Self.stringEnd(bytes, start)
        case UInt8(ascii: "t"), UInt8(ascii: "n"): start + 4
        case UInt8(ascii: "f"): start + 5
        default: Self.numberEnd(bytes, start)
        }
    }

    /// Where each member name (nil in an array) and each value of the validated object or array
    /// at `start` begins, in document order.
    package func children(_ bytes: UnsafeBufferPointer<UInt8>, of start: Int) -> [(name: Int?, value: Int)] {
        let object = bytes[start] == UInt8(ascii: "{")
        let end = containerEnd(start, count: bytes.count) - 1
        var children: [(name: Int?, value: Int)] = []
        var index = start + 1
        while true {
            Self.skipSpace(bytes, &index)
            guard index < end else { return children }
            var name: Int?
            if object {
                name = index
                index = Self.stringEnd(bytes, index)
                Self.skipSpace(bytes, &index)
                index += 1  // the colon
                Self.skipSpace(bytes, &index)
            }
            children.append((name, index))
            index = valueEnd(bytes, index)
            Self.skipSpace(bytes, &index)
            if index < end, bytes[index] == UInt8(ascii: ",") { index += 1 }
        }
    }

    package static func skipSpace(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    /// One past the validated string whose opening quote is at `start`.
    package static func stringEnd(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int) -> Int {
        var index = start + 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""): return index + 1
            case UInt8(ascii: "\\"): index += 2
            default: index += 1
            }
        }
        return bytes.count
    }

    /// One past the validated number starting at `start`.
    package static func numberEnd(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int) -> Int {
        var index = start + 1
        while index < bytes.count, isNumberByte(bytes[index]) { index += 1 }
        return index
    }

    package static func isNumberByte(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10 || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+")
            || byte == UInt8(ascii: ".") || byte | 0x20 == UInt8(ascii: "e")
    }

    /// The validated string at `start` (a quote), escapes decoded and surrogate escapes joined;
    /// nil for a surrogate escape without its pair.
    package static func string(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> String? {
        let end = stringEnd(bytes, start) - 1
        let body = UnsafeBufferPointer(rebasing: bytes[(start + 1)..<max(start + 1, end)])
        guard body.contains(UInt8(ascii: "\\")) else { return String(decoding: body, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(body.count)
        var index = 0
        while index < body.count {
            let byte = body[index]
            guard byte == UInt8(ascii: "\\"), index + 1 < body.count else {
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
                guard var scalar = unit(body, index) else { return nil }
                index += 4
                if (0xD800..<0xDC00).contains(scalar) {
                    guard index + 1 < body.count, body[index] == UInt8(ascii: "\\"),
                        body[index + 1] == UInt8(ascii: "u"), let low = unit(body, index + 2),
                        (0xDC00..<0xE000).contains(low)
                    else { return nil }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    index += 6
                }
                guard let value = Unicode.Scalar(scalar) else { return nil }
                out.append(contentsOf: String(Character(value)).utf8)
            default: out.append(escape)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The four hex digits at `index`, or nil.
    private static func unit(_ body: UnsafeBufferPointer<UInt8>, _ index: Int) -> UInt32? {
        guard index + 4 <= body.count else { return nil }
        var value: UInt32 = 0
        for offset in 0..<4 {
            guard let digit = hex(body[index + offset]) else { return nil }
            value = value << 4 | digit
        }
        return value
    }

    static func hex(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    // MARK: UTF-8

    /// The offset of the first byte that is not part of valid UTF-8, or nil when all are.
    package static func firstInvalidUTF8(_ bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBufferPointer { buffer in
            var index = 0
            while index < buffer.count {
                guard buffer[index] >= 0x80 else {
                    index += 1
                    continue
                }
                guard let end = utf8SequenceEnd(buffer, index) else { return index }
                index = end
            }
            return nil
        }
    }

    /// One past the UTF-8 sequence whose lead byte (≥ 0x80) is at `index`; nil for a byte that
    /// cannot start one, a missing continuation, an overlong form, a surrogate or a code point
    /// past U+10FFFF (RFC 3629).
    static func utf8SequenceEnd(_ bytes: UnsafeBufferPointer<UInt8>, _ index: Int) -> Int? {
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch bytes[index] {
        case 0xC2...0xDF: length = 2
        case 0xE0: (length, low) = (3, 0xA0)
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: (length, high) = (3, 0x9F)
        case 0xF0: (length, low) = (4, 0x90)
        case 0xF1...0xF3: length = 4
        case 0xF4: (length, high) = (4, 0x8F)
        default: return nil
        }
        guard index + length <= bytes.count, (low...high).contains(bytes[index + 1]) else { return nil }
        for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 { return nil }
        return index + length
    }
}
