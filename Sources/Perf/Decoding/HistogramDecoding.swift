// Reading histograms inside the report model and diagnostic payloads. A report or payload holds
// hundreds of them, and `LatencyHistogram.init(from:)` asks JSONDecoder for `[[UInt64]]`, one
// array container per bucket (three quarters of a payload's decode time). This reads the same
// keys through the same decoder, buckets as nested containers without the arrays, then hands
// the fields to `LatencyHistogram.init(from:)`, which still does every validation.
import PerfCore

/// A histogram decoded through ``HistogramDecoding``; the model's sections decode this and keep
/// its ``histogram``.
package struct DecodedHistogram: Decodable {
    package var histogram: LatencyHistogram

    package init(from decoder: any Decoder) throws {
        histogram = try HistogramDecoding.decode(from: decoder)
    }
}

enum HistogramDecoding {
    /// The compact form's keys (see `LatencyHistogram`'s `Codable` conformance).
    enum HistogramKey: String, CodingKey, CaseIterable {
        case buckets, count, lo, max, min, sub, sum, v
    }

    /// A histogram field: an integer, or the `[[index, count], …]` bucket list.
    enum Field {
        case integer(Int64)
        case unsigned(UInt64)
        case pairs([[UInt64]])
    }

    /// Reads the keys the histogram's own decoder reads, then lets it validate them.
    static func decode(from decoder: any Decoder) throws -> LatencyHistogram {
        if let lazy = decoder as? LazyJSONValueDecoder {
            return try LatencyHistogram(
                from: FieldsDecoder(fields: try lazy.histogramFields(), codingPath: lazy.codingPath))
        }
        let container = try decoder.container(keyedBy: HistogramKey.self)
        var fields: [HistogramKey: Field] = [:]
        for key in [HistogramKey.v, .sub, .lo] where container.contains(key) {
            fields[key] = .integer(try container.decode(Int64.self, forKey: key))
        }
        for key in [HistogramKey.count, .sum, .min, .max] where container.contains(key) {
            fields[key] = .unsigned(try container.decode(UInt64.self, forKey: key))
        }
        if container.contains(.buckets) {
            var list = try container.nestedUnkeyedContainer(forKey: .buckets)
            var pairs: [[UInt64]] = []
            pairs.reserveCapacity(list.count ?? 0)
            while !list.isAtEnd {
                var pair = try list.nestedUnkeyedContainer()
                var values: [UInt64] = []
                values.reserveCapacity(2)
                while !pair.isAtEnd { values.append(try pair.decode(UInt64.self)) }
                pairs.append(values)
            }
            fields[.buckets] = .pairs(pairs)
        }
        return try LatencyHistogram(from: FieldsDecoder(fields: fields, codingPath: decoder.codingPath))
    }

    /// Serves the read fields to `LatencyHistogram.init(from:)`: a keyed container of integers
    /// and one `[[UInt64]]`. Anything else it asks for is a type mismatch.
    struct FieldsDecoder: Decoder {
        let fields: [HistogramKey: Field]
        let codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<K: CodingKey>(keyedBy type: K.Type) throws -> KeyedDecodingContainer<K> {
            KeyedDecodingContainer(Container<K>(fields: fields, codingPath: codingPath))
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            throw DecodingError.typeMismatch([Any].self, .init(codingPath: codingPath, debugDescription: "an object"))
        }

        func singleValueContainer() throws -> any SingleValueDecodingContainer {
            throw DecodingError.typeMismatch(Int.self, .init(codingPath: codingPath, debugDescription: "an object"))
        }
    }

    struct Container<K: CodingKey>: KeyedDecodingContainerProtocol {
        let fields: [HistogramKey: Field]
        let codingPath: [any CodingKey]
        var allKeys: [K] { fields.keys.compactMap { K(stringValue: $0.rawValue) } }

        func contains(_ key: K) -> Bool { field(key) != nil }

        func decodeNil(forKey key: K) throws -> Bool { false }

        private func field(_ key: K) -> Field? { HistogramKey(rawValue: key.stringValue).flatMap { fields[$0] } }

        private func mismatch(_ type: Any.Type, _ key: K) -> DecodingError {
            .typeMismatch(type, .init(codingPath: codingPath + [key], debugDescription: "unexpected type"))
        }

        func decode<T: Decodable>(_ type: T.Type, forKey key: K) throws -> T {
            guard let field = field(key) else {
                throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "missing"))
            }
            switch field {
            case .pairs(let pairs): if let value = pairs as? T { return value }
            case .integer(let value):
                if T.self == Int.self, let value = Int(exactly: value) as? T { return value }
                if T.self == Int64.self, let value = value as? T { return value }
            case .unsigned(let value):
                if T.self == UInt64.self, let value = value as? T { return value }
                if T.self == Int.self, let value = Int(exactly: value) as? T { return value }
            }
            throw mismatch(T.self, key)
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: K) throws
            -> KeyedDecodingContainer<NestedKey>
        { throw mismatch([String: Any].self, key) }

        func nestedUnkeyedContainer(forKey key: K) throws -> any UnkeyedDecodingContainer {
            throw mismatch([Any].self, key)
        }

        func superDecoder() throws -> any Decoder {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "unexpected"))
        }

        func superDecoder(forKey key: K) throws -> any Decoder { throw mismatch(Any.self, key) }
    }
}
