// The lazy decoder's Decoder and containers over a LazyJSONDocument: keyed, unkeyed and single
// values, with the coding paths and error shapes JSONDecoder gives.
import Foundation

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
        guard let value = Double(document.numberText(at: start)),
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
            position = document.stringEnd(position)
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
            let keyEnd = document.stringEnd(position)
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
