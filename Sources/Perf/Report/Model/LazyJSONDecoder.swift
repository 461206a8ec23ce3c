// A JSON `Decoder` that parses only what a type's `init(from:)` reads. Diagnostic payloads are
// mostly histograms: a report build reads hundreds of payloads, most of them only for their
// process figures. JSONDecoder tokenises every byte of each and allocates a container per bucket
// pair; this one validates the bytes in one pass, remembers where each object and array ends,
// and skips what is never asked for. The types decoded are the same: `DiagnosticSnapshot`,
// `SpanIntervals`, the histograms, through their own `init(from:)`.

/// Decodes a `Decodable` from UTF-8 JSON bytes, lazily.
///
/// The whole input is scanned first (structure, strings, escapes; nesting at most 128 deep), so
/// JSON that is malformed anywhere is rejected; as with JSONDecoder, a number's grammar, a
/// string's UTF-8 and control characters are checked when the value is read, and an array may
/// end with a comma. Errors are `DecodingError`s with the coding paths JSONDecoder gives.
struct LazyJSONDecoder {
    var userInfo: [CodingUserInfoKey: Any] = [:]

    func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        let document = try LazyJSONDocument(bytes)
        return try T(
            from: LazyJSONValueDecoder(document: document, start: document.root, codingPath: [], userInfo: userInfo))
    }
}

/// The validated bytes and where each object and array ends.
final class LazyJSONDocument {
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
                    // JSONDecoder accepts a trailing comma in an array (not in an object).
                    if !object, index < bytes.count, bytes[index] == closing {
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

/// The decoder of one value of a ``LazyJSONDocument``.
struct LazyJSONValueDecoder: Decoder {
    let document: LazyJSONDocument
    let start: Int
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any]

    func child(_ start: Int, _ key: any CodingKey) -> LazyJSONValueDecoder {
        LazyJSONValueDecoder(document: document, start: start, codingPath: codingPath + [key], userInfo: userInfo)
    }

    func mismatch(_ type: Any.Type) -> DecodingError {
        let found = document.kind(at: start)
        if document.isNull(at: start) {
            return .valueNotFound(
                type,
                .init(
                    codingPath: codingPath,
                    debugDescription: "Cannot get value of type \(type) -- found null value instead"))
        }
        return .typeMismatch(
            type,
            .init(codingPath: codingPath, debugDescription: "Expected to decode \(type) but found \(found) instead."))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard document.bytes[start] == UInt8(ascii: "{") else { throw mismatch([String: Any].self) }
        return KeyedDecodingContainer(try LazyJSONKeyedContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard document.bytes[start] == UInt8(ascii: "[") else { throw mismatch([Any].self) }
        return LazyJSONUnkeyedContainer(decoder: self)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { LazyJSONSingleValue(decoder: self) }

    /// The value as `T`: scalars parsed here, anything else through `T.init(from:)`.
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if let value = try scalar(T.self) { return value }
        return try T(from: self)
    }

    /// `T` when it is a JSON scalar type, parsed; nil for other types.
    func scalar<T>(_ type: T.Type) throws -> T? {
        let value: Any?
        switch type {
        case is String.Type:
            guard document.bytes[start] == UInt8(ascii: "\"") else { throw mismatch(T.self) }
            guard let string = document.string(at: start) else {
                throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "invalid string"))
            }
            value = string
        case is Bool.Type:
            switch document.bytes[start] {
            case UInt8(ascii: "t"): value = true
            case UInt8(ascii: "f"): value = false
            default: throw mismatch(T.self)
            }
        case is Double.Type: value = try number(Double.self)
        case is Float.Type: value = Float(try number(Double.self))
        case is Int.Type: value = try integer(Int.self)
        case is Int64.Type: value = try integer(Int64.self)
        case is Int32.Type: value = try integer(Int32.self)
        case is Int16.Type: value = try integer(Int16.self)
        case is Int8.Type: value = try integer(Int8.self)
        case is UInt.Type: value = try integer(UInt.self)
        case is UInt64.Type: value = try integer(UInt64.self)
        case is UInt32.Type: value = try integer(UInt32.self)
        case is UInt16.Type: value = try integer(UInt16.self)
        case is UInt8.Type: value = try integer(UInt8.self)
        default: return nil
        }
        return value as? T
    }

    func isNumber() -> Bool {
        let byte = document.bytes[start]
        return byte == UInt8(ascii: "-") || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
    }

    func number(_ type: Double.Type) throws -> Double {
        guard isNumber() else { throw mismatch(Double.self) }
        guard document.isWellFormedNumber(at: start), let value = Double(document.numberText(at: start)),
            value.isFinite
        else { throw notRepresentable("a finite number") }
        return value
    }

    func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        guard isNumber() else { throw mismatch(T.self) }
        guard let value = document.integer(T.self, at: start) else {
            throw notRepresentable("a whole number within range")
        }
        return value
    }

    /// A number of the right JSON type that the Swift type cannot hold (`1.5` for an integer).
    func notRepresentable(_ expected: String) -> DecodingError {
        .dataCorrupted(
            .init(
                codingPath: codingPath,
                debugDescription: "expected \(expected), found \(document.numberText(at: start))"))
    }
}

struct LazyJSONKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: LazyJSONValueDecoder
    /// Member names in document order, and where each value starts.
    private let names: [String]
    private let starts: [Int]
    /// For larger objects (maps of span names), an index; small ones are searched in order.
    private let index: [String: Int]?

    init(decoder: LazyJSONValueDecoder) throws {
        self.decoder = decoder
        let document = decoder.document
        var names: [String] = []
        var starts: [Int] = []
        var position = decoder.start + 1
        let end = document.containerEnd(decoder.start) - 1
        while true {
            document.skipSpace(&position)
            guard position < end, document.bytes[position] == UInt8(ascii: "\"") else { break }
            // Validated: the key is a string, a colon follows, then the value.
            guard let name = document.string(at: position) else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: decoder.codingPath, debugDescription: "invalid key"))
            }
            names.append(name)
            position = (try? document.stringEnd(position)) ?? end
            document.skipSpace(&position)
            position += 1
            document.skipSpace(&position)
            starts.append(position)
            position = document.valueEnd(position)
            document.skipSpace(&position)
            if position < end, document.bytes[position] == UInt8(ascii: ",") { position += 1 }
        }
        self.names = names
        self.starts = starts
        if names.count > 16 {
            var index: [String: Int] = [:]
            index.reserveCapacity(names.count)
            for (offset, name) in names.enumerated() where index[name] == nil { index[name] = offset }
            self.index = index
        } else {
            index = nil
        }
    }

    var codingPath: [any CodingKey] { decoder.codingPath }

    var allKeys: [Key] { names.compactMap { Key(stringValue: $0) } }

    private func valueStart(_ key: Key) -> Int? {
        if let index { return index[key.stringValue].map { starts[$0] } }
        // The first of duplicates wins, as with JSONDecoder.
        return names.firstIndex(of: key.stringValue).map { starts[$0] }
    }

    private func value(_ key: Key) throws -> LazyJSONValueDecoder {
        guard let start = valueStart(key) else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "No value associated with key \(key.stringValue).")
            )
        }
        return decoder.child(start, key)
    }

    func contains(_ key: Key) -> Bool { valueStart(key) != nil }

    func decodeNil(forKey key: Key) throws -> Bool {
        let value = try value(key)
        return value.document.isNull(at: value.start)
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try value(key).decode(T.self) }

    func decode(_ type: String.Type, forKey key: Key) throws -> String { try value(key).decode(String.self) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try value(key).decode(Bool.self) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try value(key).number(Double.self) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try value(key).integer(Int.self) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try value(key).integer(Int64.self) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try value(key).integer(UInt64.self) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    { try value(key).container(keyedBy: NestedKey.self) }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try value(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        guard let key = Key(stringValue: "super") else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "no \"super\" key"))
        }
        return try value(key)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder { try value(key) }
}

struct LazyJSONUnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: LazyJSONValueDecoder
    /// The next element's first byte, or the closing bracket.
    private var position: Int
    private let closing: Int
    private(set) var currentIndex = 0

    init(decoder: LazyJSONValueDecoder) {
        self.decoder = decoder
        closing = decoder.document.containerEnd(decoder.start) - 1
        position = decoder.start + 1
        decoder.document.skipSpace(&position)
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { nil }
    var isAtEnd: Bool { position >= closing }

    /// The next element, and moves past it.
    private mutating func next(_ type: Any.Type) throws -> LazyJSONValueDecoder {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type,
                .init(
                    codingPath: codingPath + [IndexKey(currentIndex)], debugDescription: "Unkeyed container is at end.")
            )
        }
        let element = decoder.child(position, IndexKey(currentIndex))
        let document = decoder.document
        position = document.valueEnd(position)
        document.skipSpace(&position)
        if position < closing, document.bytes[position] == UInt8(ascii: ",") {
            position += 1
            document.skipSpace(&position)
        }
        currentIndex += 1
        return element
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, decoder.document.isNull(at: position) else { return false }
        _ = try next(Any.self)
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(T.self).decode(T.self) }

    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(UInt64.self).integer(UInt64.self) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(Int64.self).integer(Int64.self) }
    mutating func decode(_ type: String.Type) throws -> String { try next(String.self).decode(String.self) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    { try next([String: Any].self).container(keyedBy: NestedKey.self) }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next([Any].self).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { try next(Any.self) }
}

struct LazyJSONSingleValue: SingleValueDecodingContainer {
    let decoder: LazyJSONValueDecoder

    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { decoder.document.isNull(at: decoder.start) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decode(T.self) }

    func decode(_ type: String.Type) throws -> String { try decoder.decode(String.self) }
    func decode(_ type: Bool.Type) throws -> Bool { try decoder.decode(Bool.self) }
    func decode(_ type: Double.Type) throws -> Double { try decoder.number(Double.self) }
    func decode(_ type: Int.Type) throws -> Int { try decoder.integer(Int.self) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decoder.integer(Int64.self) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decoder.integer(UInt64.self) }
}

extension LazyJSONValueDecoder {
    /// A histogram object's fields straight from the bytes: the compact form's keys (any other
    /// is skipped), integers parsed in place and the buckets without a container per pair. The
    /// histogram's own `init(from:)` then validates them (see ``HistogramDecoding``).
    func histogramFields() throws -> [HistogramDecoding.HistogramKey: HistogramDecoding.Field] {
        let bytes = document.bytes
        guard bytes[start] == UInt8(ascii: "{") else { throw mismatch([String: Any].self) }
        var fields: [HistogramDecoding.HistogramKey: HistogramDecoding.Field] = [:]
        var position = start + 1
        let end = document.containerEnd(start) - 1
        while true {
            document.skipSpace(&position)
            guard position < end, bytes[position] == UInt8(ascii: "\"") else { break }
            let keyEnd = try document.stringEnd(position)
            let raw = bytes[(position + 1)..<(keyEnd - 1)]
            let name =
                raw.contains(UInt8(ascii: "\\"))
                ? document.string(at: position) ?? "" : String(decoding: raw, as: UTF8.self)
            position = keyEnd
            document.skipSpace(&position)
            position += 1  // the colon
            document.skipSpace(&position)
            let valueStart = position
            position = document.valueEnd(valueStart)
            // The first of duplicates wins, as with JSONDecoder; a later one is not even read.
            if let key = HistogramDecoding.HistogramKey(rawValue: name), fields[key] == nil {
                switch key {
                case .buckets: fields[key] = .pairs(try bucketPairs(at: valueStart, key: key))
                case .v, .sub, .lo: fields[key] = .integer(try integer(Int64.self, at: valueStart, key: key))
                case .count, .sum, .min, .max:
                    fields[key] = .unsigned(try integer(UInt64.self, at: valueStart, key: key))
                }
            }
            document.skipSpace(&position)
            if position < end, bytes[position] == UInt8(ascii: ",") { position += 1 }
        }
        return fields
    }

    private func integer<T: FixedWidthInteger>(_ type: T.Type, at start: Int, key: any CodingKey) throws -> T {
        let byte = document.bytes[start]
        if byte == UInt8(ascii: "-") || byte &- UInt8(ascii: "0") < 10, let value = document.integer(T.self, at: start)
        {
            return value
        }
        return try child(start, key).integer(T.self)  // throws the mismatch with its path
    }

    /// `[[index, count], …]` at `start`.
    private func bucketPairs(at start: Int, key: any CodingKey) throws -> [[UInt64]] {
        let bytes = document.bytes
        guard bytes[start] == UInt8(ascii: "[") else { throw child(start, key).mismatch([Any].self) }
        var pairs: [[UInt64]] = []
        var position = start + 1
        let end = document.containerEnd(start) - 1
        document.skipSpace(&position)
        while position < end {
            guard bytes[position] == UInt8(ascii: "[") else {
                throw child(start, key).child(position, IndexKey(pairs.count)).mismatch([Any].self)
            }
            let pairEnd = document.containerEnd(position) - 1
            var pair: [UInt64] = []
            pair.reserveCapacity(2)
            var inner = position + 1
            document.skipSpace(&inner)
            while inner < pairEnd {
                if bytes[inner] &- UInt8(ascii: "0") < 10, let value = document.integer(UInt64.self, at: inner) {
                    pair.append(value)
                } else {
                    // The rare path: JSONDecoder's error (or value, for `-0`) with its path.
                    let element = child(start, key).child(position, IndexKey(pairs.count))
                        .child(inner, IndexKey(pair.count))
                    pair.append(try element.integer(UInt64.self))
                }
                inner = document.valueEnd(inner)
                document.skipSpace(&inner)
                if inner < pairEnd, bytes[inner] == UInt8(ascii: ",") { inner += 1 }
                document.skipSpace(&inner)
            }
            pairs.append(pair)
            position = pairEnd + 1
            document.skipSpace(&position)
            if position < end, bytes[position] == UInt8(ascii: ",") { position += 1 }
            document.skipSpace(&position)
        }
        return pairs
    }
}
