// Decodes a payload's `{"name": histogram, …}` maps without JSONDecoder: a report build decodes
// hundreds of histograms per payload, and JSONDecoder's nested containers made that most of the
// build time. The histogram's own `init(from:)` still does every validation.
import PerfCore

enum HistogramMapDecoder {
    /// Parses `{"name":{histogram},…}`.
    ///
    /// - Throws: `HistogramMapError` for malformed JSON, or the histogram's own validation errors.
    static func decode(_ bytes: ArraySlice<UInt8>) throws -> [String: LatencyHistogram] {
        var parser = Parser(bytes: bytes)
        var result: [String: LatencyHistogram] = [:]
        try parser.expect(UInt8(ascii: "{"))
        if try parser.peek() == UInt8(ascii: "}") {
            parser.index += 1
            return result
        }
        repeat {
            let name = try parser.string()
            try parser.expect(UInt8(ascii: ":"))
            let fields = try parser.histogramFields()
            result[name] = try LatencyHistogram(from: FieldsDecoder(fields: fields))
        } while try parser.comma(closing: UInt8(ascii: "}"))
        return result
    }

    struct MalformedJSON: Error {}

    /// A histogram object's members: integers, and the `[[index, count], …]` bucket list.
    enum Field {
        case integer(UInt64, negative: Bool)
        case pairs([[UInt64]])
    }

    struct Parser {
        let bytes: ArraySlice<UInt8>
        var index: Int

        init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            self.index = bytes.startIndex
        }

        mutating func peek() throws -> UInt8 {
            while index < bytes.endIndex,
                bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09
            {
                index += 1
            }
            guard index < bytes.endIndex else { throw MalformedJSON() }
            return bytes[index]
        }

        mutating func expect(_ byte: UInt8) throws {
            guard try peek() == byte else { throw MalformedJSON() }
            index += 1
        }

        /// After a member or element: true at `,`, false at `closing`.
        mutating func comma(closing: UInt8) throws -> Bool {
            let byte = try peek()
            index += 1
            if byte == UInt8(ascii: ",") { return true }
            if byte == closing { return false }
            throw MalformedJSON()
        }

        /// A string; escapes are decoded by Foundation-free rules for the common ones and any
        /// `\u` makes the whole string go through the slow path.
        mutating func string() throws -> String {
            try expect(UInt8(ascii: "\""))
            let start = index
            var escaped = false
            while index < bytes.endIndex, bytes[index] != UInt8(ascii: "\"") {
                if bytes[index] == UInt8(ascii: "\\") {
                    escaped = true
                    index += 1
                }
                index += 1
            }
            guard index < bytes.endIndex else { throw MalformedJSON() }
            let raw = bytes[start..<index]
            index += 1
            guard escaped else { return String(decoding: raw, as: UTF8.self) }
            var quoted: [UInt8] = [UInt8(ascii: "\"")]
            quoted.append(contentsOf: raw)
            quoted.append(UInt8(ascii: "\""))
            let line = Array("{\"k\":".utf8) + quoted + [UInt8(ascii: "}")]
            guard let object = line.withUnsafeBufferPointer({ LedgerLineParser.parseObject($0) }),
                case .string(let value)? = object["k"]
            else { throw MalformedJSON() }
            return value
        }

        mutating func integer() throws -> (UInt64, Bool) {
            var negative = false
            if try peek() == UInt8(ascii: "-") {
                negative = true
                index += 1
            }
            var value: UInt64 = 0
            let start = index
            while index < bytes.endIndex, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
                guard !overflow1, !overflow2 else { throw MalformedJSON() }
                value = sum
                index += 1
            }
            guard index > start else { throw MalformedJSON() }
            return (value, negative)
        }

        mutating func histogramFields() throws -> [String: Field] {
            var fields: [String: Field] = [:]
            try expect(UInt8(ascii: "{"))
            if try peek() == UInt8(ascii: "}") {
                index += 1
                return fields
            }
            repeat {
                let key = try string()
                try expect(UInt8(ascii: ":"))
                if try peek() == UInt8(ascii: "[") {
                    fields[key] = .pairs(try pairs())
                } else {
                    let (value, negative) = try integer()
                    fields[key] = .integer(value, negative: negative)
                }
            } while try comma(closing: UInt8(ascii: "}"))
            return fields
        }

        mutating func pairs() throws -> [[UInt64]] {
            var result: [[UInt64]] = []
            try expect(UInt8(ascii: "["))
            if try peek() == UInt8(ascii: "]") {
                index += 1
                return result
            }
            repeat {
                try expect(UInt8(ascii: "["))
                var pair: [UInt64] = []
                if try peek() != UInt8(ascii: "]") {
                    repeat {
                        let (value, negative) = try integer()
                        guard !negative else { throw MalformedJSON() }
                        pair.append(value)
                    } while try comma(closing: UInt8(ascii: "]"))
                } else {
                    index += 1
                }
                result.append(pair)
            } while try comma(closing: UInt8(ascii: "]"))
            return result
        }
    }

    /// A `Decoder` over parsed histogram fields, serving exactly what
    /// `LatencyHistogram.init(from:)` asks for: a keyed container of integers and one
    /// `[[UInt64]]`. Anything else is a type mismatch.
    struct FieldsDecoder: Decoder {
        let fields: [String: Field]
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            KeyedDecodingContainer(Container<Key>(fields: fields))
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw MalformedJSON() }

        func singleValueContainer() throws -> any SingleValueDecodingContainer { throw MalformedJSON() }
    }

    struct Container<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let fields: [String: Field]
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { fields.keys.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool { fields[key.stringValue] != nil }

        func decodeNil(forKey key: Key) throws -> Bool { false }

        private func field(_ key: Key) throws -> Field {
            guard let field = fields[key.stringValue] else {
                throw DecodingError.keyNotFound(key, .init(codingPath: [], debugDescription: "missing"))
            }
            return field
        }

        private func unsigned(_ key: Key) throws -> UInt64 {
            guard case .integer(let value, let negative) = try field(key), !negative else {
                throw DecodingError.typeMismatch(UInt64.self, .init(codingPath: [key], debugDescription: "not a count"))
            }
            return value
        }

        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try unsigned(key) }

        func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
            guard case .integer(let value, let negative) = try field(key), value <= UInt64(Int.max) else {
                throw DecodingError.typeMismatch(Int.self, .init(codingPath: [key], debugDescription: "not an integer"))
            }
            return negative ? -Int(value) : Int(value)
        }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            if T.self == [[UInt64]].self, case .pairs(let pairs) = try field(key), let value = pairs as? T {
                return value
            }
            if T.self == UInt64.self, let value = try unsigned(key) as? T { return value }
            if T.self == Int.self, let value = try decode(Int.self, forKey: key) as? T { return value }
            throw DecodingError.typeMismatch(T.self, .init(codingPath: [key], debugDescription: "unexpected type"))
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey>
        { throw MalformedJSON() }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { throw MalformedJSON() }

        func superDecoder() throws -> any Decoder { throw MalformedJSON() }

        func superDecoder(forKey key: Key) throws -> any Decoder { throw MalformedJSON() }
    }
}
