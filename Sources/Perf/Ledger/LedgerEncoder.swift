// The hand-written JSON encoder for ledger lines: sorted keys, compact, no Foundation on the path.

/// Encodes ``LedgerEvent`` values as compact JSON lines with keys in byte order.
///
/// JSONEncoder costs ~8 µs per line here and sorts through dictionaries; the schema is fixed, so
/// the keys are written in a precomputed order and only the rare ``LedgerEvent/extra`` keys
/// are merged in. Output is appended to a caller's buffer so the writer can reuse its capacity.
package enum LedgerEncoder {
    /// Appends `event` as one JSON object followed by `\n`.
    package static func encodeLine(_ event: LedgerEvent, into out: inout [UInt8]) {
        // One capacity check for the usual line rather than one per append.
        out.reserveCapacity(out.count + 512)
        out.append(UInt8(ascii: "{"))
        var first = true
        if event.extra.isEmpty {
            for key in FixedKey.allCases {
                writeFixed(key, of: event, into: &out, first: &first)
            }
        } else {
            // Extra keys are merged into the fixed order so the whole object stays sorted.
            let extras = event.extra
                .filter { FixedKey(name: $0.key) == nil }
                .sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            var next = 0
            for key in FixedKey.allCases {
                while next < extras.count, extras[next].key.utf8.lexicographicallyPrecedes(key.spelling) {
                    writeExtra(extras[next].key, extras[next].value, into: &out, first: &first)
                    next += 1
                }
                writeFixed(key, of: event, into: &out, first: &first)
            }
            while next < extras.count {
                writeExtra(extras[next].key, extras[next].value, into: &out, first: &first)
                next += 1
            }
        }
        out.append(UInt8(ascii: "}"))
        out.append(UInt8(ascii: "\n"))
    }

    /// The fixed schema keys, declared in byte order: `allCases` is the order they are written in.
    enum FixedKey: CaseIterable {
        case budgetMs, count, culprit, detail, durationMs, exit, fatal, kind, lowerMs, name, session, site
        case stack, stallMs, stuckFrames, suppressed, thread, ts, upperMs, v

        /// The key as it appears in a line (`budgetMs`).
        var name: String { String(decoding: spelling, as: UTF8.self) }

        /// The key's bytes: ``json`` without its `,"` and `":`.
        var spelling: UnsafeBufferPointer<UInt8> {
            let json = json
            return UnsafeBufferPointer(start: json.utf8Start + 2, count: json.utf8CodeUnitCount - 4)
        }

        /// `,"key":`, as written after another key (the first key skips the comma).
        var json: StaticString {
            switch self {
            case .budgetMs: #","budgetMs":"#
            case .count: #","count":"#
            case .culprit: #","culprit":"#
            case .detail: #","detail":"#
            case .durationMs: #","durationMs":"#
            case .exit: #","exit":"#
            case .fatal: #","fatal":"#
            case .kind: #","kind":"#
            case .lowerMs: #","lowerMs":"#
            case .name: #","name":"#
            case .session: #","session":"#
            case .site: #","site":"#
            case .stack: #","stack":"#
            case .stallMs: #","stallMs":"#
            case .stuckFrames: #","stuckFrames":"#
            case .suppressed: #","suppressed":"#
            case .thread: #","thread":"#
            case .ts: #","ts":"#
            case .upperMs: #","upperMs":"#
            case .v: #","v":"#
            }
        }

        /// The key named `name`, found by comparing bytes with each ``spelling`` (no String is
        /// made: the reader asks this of every key of every line it parses).
        init?(name: String) {
            var name = name
            let key: FixedKey? = name.withUTF8 { bytes in
                FixedKey.allCases.first { $0.spelling.count == bytes.count && $0.spelling.elementsEqual(bytes) }
            }
            guard let key else { return nil }
            self = key
        }
    }

    private static func writeFixed(
        _ key: FixedKey, of event: LedgerEvent, into out: inout [UInt8], first: inout Bool
    ) {
        switch key {
        case .budgetMs: writeNumber(key, event.budgetMs, into: &out, first: &first)
        case .count:
            if let count = event.count {
                writeKey(key, into: &out, first: &first)
                writeInteger(Int64(count), into: &out)
            }
        case .culprit: writeString(key, event.culprit, into: &out, first: &first)
        case .detail: writeString(key, event.detail, into: &out, first: &first)
        case .durationMs: writeNumber(key, event.durationMs, into: &out, first: &first)
        case .exit: writeString(key, event.exit, into: &out, first: &first)
        case .fatal:
            if let fatal = event.fatal {
                writeKey(key, into: &out, first: &first)
                writeBool(fatal, into: &out)
            }
        case .kind: writeString(key, event.kind.rawValue, into: &out, first: &first)
        case .lowerMs: writeNumber(key, event.lowerMs, into: &out, first: &first)
        case .name: writeString(key, event.name, into: &out, first: &first)
        case .session: writeString(key, event.session, into: &out, first: &first)
        case .site: writeString(key, event.site, into: &out, first: &first)
        case .stack: writeStrings(key, event.stack, into: &out, first: &first)
        case .stallMs: writeNumber(key, event.stallMs, into: &out, first: &first)
        case .stuckFrames: writeStrings(key, event.stuckFrames, into: &out, first: &first)
        case .suppressed: writeString(key, event.suppressed, into: &out, first: &first)
        case .thread: writeString(key, event.thread, into: &out, first: &first)
        case .ts:
            writeKey(key, into: &out, first: &first)
            out.append(UInt8(ascii: "\""))
            LedgerTimestamp.appendISO8601(millisecondsSinceEpoch: event.timestampMs, into: &out)
            out.append(UInt8(ascii: "\""))
        case .upperMs: writeNumber(key, event.upperMs, into: &out, first: &first)
        case .v:
            writeKey(key, into: &out, first: &first)
            writeInteger(Int64(event.version), into: &out)
        }
    }

    private static func writeExtra(_ key: String, _ value: LedgerValue, into out: inout [UInt8], first: inout Bool) {
        if case .double(let number) = value, !number.isFinite { return }
        writeKey(key, into: &out, first: &first)
        switch value {
        case .string(let string): appendQuoted(string, into: &out)
        case .int(let integer): writeInteger(integer, into: &out)
        case .double(let number): appendDouble(number, into: &out)
        case .bool(let flag): writeBool(flag, into: &out)
        case .strings(let strings): appendArray(strings, into: &out)
        case .objects(let objects): appendObjects(objects, into: &out)
        case .object(let object): appendObject(object, into: &out)
        }
    }

    private static func appendObjects(_ objects: [[String: LedgerValue]], into out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for (index, object) in objects.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            appendObject(object, into: &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    /// An object of extra values, its keys in byte order.
    package static func appendObject(_ object: [String: LedgerValue], into out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        var first = true
        for key in object.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            if let value = object[key] { writeExtra(key, value, into: &out, first: &first) }
        }
        out.append(UInt8(ascii: "}"))
    }

    /// Schema keys need no escaping: each is copied whole from its static bytes (`,"name":`), with
    /// no array to retain and no walk of a String's UTF-8 view.
    @inline(__always)
    private static func writeKey(_ key: FixedKey, into out: inout [UInt8], first: inout Bool) {
        let bytes = key.json
        let skip = first ? 1 : 0
        first = false
        out.append(
            contentsOf: UnsafeBufferPointer(start: bytes.utf8Start + skip, count: bytes.utf8CodeUnitCount - skip))
    }

    private static func writeKey(_ key: String, into out: inout [UInt8], first: inout Bool) {
        if !first { out.append(UInt8(ascii: ",")) }
        first = false
        appendQuoted(key, into: &out)
        out.append(UInt8(ascii: ":"))
    }

    private static func writeString(_ key: FixedKey, _ value: String?, into out: inout [UInt8], first: inout Bool) {
        guard let value else { return }
        writeKey(key, into: &out, first: &first)
        appendQuoted(value, into: &out)
    }

    private static func writeStrings(_ key: FixedKey, _ value: [String]?, into out: inout [UInt8], first: inout Bool) {
        guard let value else { return }
        writeKey(key, into: &out, first: &first)
        appendArray(value, into: &out)
    }

    /// NaN and infinities have no JSON spelling: the key is left out rather than lying.
    private static func writeNumber(_ key: FixedKey, _ value: Double?, into out: inout [UInt8], first: inout Bool) {
        guard let value, value.isFinite else { return }
        writeKey(key, into: &out, first: &first)
        appendDouble(value, into: &out)
    }

    private static func writeBool(_ value: Bool, into out: inout [UInt8]) {
        out.append(contentsOf: value ? "true".utf8 : "false".utf8)
    }

    private static func appendArray(_ strings: [String], into out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for (index, string) in strings.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            appendQuoted(string, into: &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    /// Integral values print without a fraction ("budgetMs":1000); others use Swift's shortest
    /// round-tripping form, which is valid JSON for every finite double.
    /// Writes a finite double in plain decimal notation with Swift's shortest round-tripping
    /// digits: `0.000025`, never `2.5e-05` (valid JSON, but a reader of a millisecond figure
    /// should not meet an exponent, and `jq`/spreadsheets print it as is).
    package static func appendDouble(_ value: Double, into out: inout [UInt8]) {
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 {
            writeInteger(Int64(value), into: &out)
        } else {
            let text = value.description
            // The common case has no exponent: append the digits as they are, without a copy (a
            // short String is stored inline, so an over-budget line's encode allocates nothing).
            if text.utf8.contains(where: { $0 == UInt8(ascii: "e") }) {
                appendPlain(text, into: &out)
            } else {
                out.append(contentsOf: text.utf8)
            }
        }
    }

    /// `description` without its exponent: the digits moved around the decimal point. Works on
    /// the description's bytes in place, so a duration under 0.0001 ms costs no allocation.
    static func appendPlain(_ description: String, into out: inout [UInt8]) {
        var description = description
        description.withUTF8 { text in
            guard let e = text.firstIndex(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }),
                let exponent = parseExponent(text[(e + 1)...])
            else {
                out.append(contentsOf: text)
                return
            }
            var start = 0
            if text.first == UInt8(ascii: "-") {
                out.append(UInt8(ascii: "-"))
                start = 1
            }
            let point = text[start..<e].firstIndex(of: UInt8(ascii: ".")) ?? e
            let integral = point - start
            // The mantissa's digits without its point: `integral` before it, the rest after.
            func digit(_ index: Int) -> UInt8 {
                index < integral ? text[start + index] : text[point + 1 + index - integral]
            }
            var count = integral + (point < e ? e - point - 1 : 0)
            // Where the decimal point falls among the digits once the exponent is applied.
            let position = integral + exponent
            while count > 1, digit(count - 1) == UInt8(ascii: "0"), count > position { count -= 1 }
            if position <= 0 {
                out.append(contentsOf: "0.".utf8)
                out.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: -position))
                for index in 0..<count { out.append(digit(index)) }
            } else if position >= count {
                for index in 0..<count { out.append(digit(index)) }
                out.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: position - count))
            } else {
                for index in 0..<position { out.append(digit(index)) }
                out.append(UInt8(ascii: "."))
                for index in position..<count { out.append(digit(index)) }
            }
        }
    }

    /// A decimal exponent with an optional sign (`-5`, `+21`, `308`); nil for anything else.
    private static func parseExponent(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Int? {
        var digits = bytes[...]
        var negative = false
        if let sign = digits.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
            negative = sign == UInt8(ascii: "-")
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.count <= 6 else { return nil }
        var value = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return negative ? -value : value
    }

    package static func writeInteger(_ value: Int64, into out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for 20 digits
        withUnsafeMutableBytes(of: &digits) { buffer in
            var index = buffer.count
            repeat {
                index -= 1
                buffer[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            out.append(contentsOf: buffer[index...])
        }
    }

    /// Writes a JSON string. Swift strings are always valid UTF-8, so only `"`, `\` and control
    /// characters (C0 and DEL) need escaping, as `\u00XX` so every reader understands them. U+FEFF
    /// is escaped too: Foundation's JSONSerialization silently drops a raw one at the start of a
    /// string. Unescaped runs are copied in bulk, and the scan for the next byte to escape reads
    /// eight bytes at a time (``firstSpecial(_:from:)``): most strings have none.
    package static func appendQuoted(_ string: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { bytes in
            var runStart = 0
            var index = firstSpecial(bytes, from: 0)
            while index < bytes.count {
                let byte = bytes[index]
                let escapeLength: Int
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0..<0x20, 0x7F: escapeLength = 1
                case 0xEF where index + 2 < bytes.count && bytes[index + 1] == 0xBB && bytes[index + 2] == 0xBF:
                    escapeLength = 3
                default:
                    index = firstSpecial(bytes, from: index + 1)
                    continue
                }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                    out.append(UInt8(ascii: "\\"))
                    out.append(byte)
                case 0xEF:
                    out.append(contentsOf: "\\ufeff".utf8)
                default:
                    out.append(contentsOf: "\\u00".utf8)
                    out.append(hexDigit(byte >> 4))
                    out.append(hexDigit(byte & 0xF))
                }
                index += escapeLength
                runStart = index
                index = firstSpecial(bytes, from: index)
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
        }
        out.append(UInt8(ascii: "\""))
    }

    /// The index of the first byte at or after `start` that may need escaping (`"`, `\`, a control
    /// character, DEL or 0xEF, the first byte of U+FEFF), or `bytes.count`. Tests eight bytes per
    /// step with the carry-free "has a byte below n / equal to c" word tricks; a word with a hit is
    /// then walked byte by byte, so a false alarm costs a few compares, never a wrong answer.
    @inline(__always)
    static func firstSpecial(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        if let base = bytes.baseAddress {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            while index + 8 <= bytes.count {
                let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
                // High bit set in a byte of the result if that byte of `word` is zero (or, past the
                // first such byte, possibly by its borrow: the word is then walked anyway).
                func zeroByte(_ word: UInt64) -> UInt64 { (word &- ones) & ~word }
                let below = (word &- ones &* 0x20) & ~word
                let quote = zeroByte(word ^ (ones &* 0x22)) | zeroByte(word ^ (ones &* 0x5C))
                let other = zeroByte(word ^ (ones &* 0x7F)) | zeroByte(word ^ (ones &* 0xEF))
                if (below | quote | other) & highs != 0 { break }
                index += 8
            }
        }
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0..<0x20, 0x7F, 0xEF: return index
            default: index += 1
            }
        }
        return index
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
