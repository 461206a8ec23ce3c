// Compact, sparse JSON for histograms: diagnostics files and performance-report.json carry it.
import Foundation

/// Why a histogram could not be read from JSON, with what to do about it.
public struct HistogramJSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A human-readable explanation, naming the offending field.
    public let message: String

    /// Creates an error with an explanation.
    public init(_ message: String) { self.message = message }

    /// The explanation, as printed by `print(error)`.
    public var description: String { message }
}

/// The JSON form, keys sorted (as everywhere in Perf's files):
///
/// ```
/// {"buckets":[[index,count],…],"count":N,"lo":9,"max":ns,"min":ns,"sub":64,"sum":ns,"v":1}
/// ```
///
/// `v` is the major version: a reader rejects any other. Unknown keys are ignored, so minor
/// additions stay readable. `sub` (sub-buckets per octave) and `lo` (exponent of the first octave)
/// describe the geometry, so another tool can turn an `index` into bounds: octave
/// `e = index / sub + lo`, lower bound `(sub + index % sub) << (e - log2(sub))`, width
/// `1 << (e - log2(sub))`. Only non-empty buckets are listed, in increasing index order.
extension LatencyHistogram: Codable {
    /// The only major version of the format this code reads and writes.
    public static let jsonVersion = 1

    enum CodingKeys: String, CodingKey {
        case buckets, count, lowestExponent = "lo", max, min, subBuckets = "sub", sum, version = "v"
    }

    /// The compact JSON form described on the `Codable` conformance.
    public var jsonString: String {
        let pairs = nonEmptyBuckets.map { "[\($0.index),\($0.count)]" }.joined(separator: ",")
        return "{\"buckets\":[\(pairs)],\"count\":\(count),\"lo\":\(HistogramLayout.lowestExponent),"
            + "\"max\":\(maxNanos),\"min\":\(minNanos),\"sub\":\(HistogramLayout.subBucketCount),"
            + "\"sum\":\(sumNanos),\"v\":\(Self.jsonVersion)}"
    }

    /// Parses the compact JSON form.
    ///
    /// Never traps, whatever the input: malformed JSON, another major version, another geometry
    /// and internally inconsistent histograms (bucket counts that do not add up to `count`, a
    /// `min` outside the first bucket, …) are all reported as errors.
    ///
    /// - Parameter json: UTF-8 JSON text, as produced by ``jsonString`` or `JSONEncoder`.
    /// - Throws: ``HistogramJSONError`` saying which field is wrong.
    public init(json: some StringProtocol) throws(HistogramJSONError) {
        // JSON as every reader of the package reads it; JSONDecoder lets a trailing comma by.
        do {
            _ = try JSONScanner(Array(json.utf8))
        } catch {
            throw HistogramJSONError("cannot read histogram JSON: not valid JSON (\(error))")
        }
        do {
            self = try JSONDecoder().decode(LatencyHistogram.self, from: Data(json.utf8))
        } catch let error as DecodingError {
            throw HistogramJSONError("cannot read histogram JSON: \(Self.explain(error))")
        } catch {
            throw HistogramJSONError("cannot read histogram JSON: \(error)")
        }
    }

    /// Writes the compact form; with `JSONEncoder` and `.sortedKeys` it equals ``jsonString``.
    ///
    /// - Parameter encoder: The encoder, typically the one writing a report or diagnostics file.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(nonEmptyBuckets.map { [UInt64($0.index), $0.count] }, forKey: .buckets)
        try container.encode(count, forKey: .count)
        try container.encode(HistogramLayout.lowestExponent, forKey: .lowestExponent)
        try container.encode(maxNanos, forKey: .max)
        try container.encode(minNanos, forKey: .min)
        try container.encode(HistogramLayout.subBucketCount, forKey: .subBuckets)
        try container.encode(sumNanos, forKey: .sum)
        try container.encode(Self.jsonVersion, forKey: .version)
    }

    /// Reads and validates the compact form (see ``init(json:)`` for what is rejected).
    ///
    /// - Parameter decoder: The decoder, typically the one reading a report or diagnostics file.
    /// - Throws: `DecodingError.dataCorrupted` naming the wrong field, or the decoder's own errors.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func reject(_ key: CodingKeys, _ message: String) -> DecodingError {
            DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: message)
        }
        let version = try container.decode(Int.self, forKey: .version)
        guard version == Self.jsonVersion else {
            throw reject(.version, "histogram format v\(version) is not v\(Self.jsonVersion); use a Perf that reads it")
        }
        let subBuckets = try container.decode(Int.self, forKey: .subBuckets)
        let lowestExponent = try container.decode(Int.self, forKey: .lowestExponent)
        guard subBuckets == HistogramLayout.subBucketCount, lowestExponent == HistogramLayout.lowestExponent else {
            throw reject(
                .subBuckets, "histogram geometry sub=\(subBuckets) lo=\(lowestExponent) is not v1's sub=64 lo=9")
        }
        let count = try container.decode(UInt64.self, forKey: .count)
        let sum = try container.decode(UInt64.self, forKey: .sum)
        let minimum = try container.decode(UInt64.self, forKey: .min)
        let maximum = try container.decode(UInt64.self, forKey: .max)
        let pairs = try container.decode([[UInt64]].self, forKey: .buckets)

        var counts = [UInt64](repeating: 0, count: HistogramLayout.bucketCount)
        var total: UInt64 = 0
        var previous = -1
        for pair in pairs {
            guard pair.count == 2, pair[0] < UInt64(HistogramLayout.bucketCount), Int(pair[0]) > previous,
                pair[1] > 0
            else {
                throw reject(.buckets, "bucket \(pair) is not an [index, count] pair in increasing index order")
            }
            let (newTotal, overflow) = total.addingReportingOverflow(pair[1])
            guard !overflow else { throw reject(.buckets, "bucket counts overflow a 64-bit count") }
            previous = Int(pair[0])
            counts[previous] = pair[1]
            total = newTotal
        }
        guard total == count else {
            throw reject(.count, "count \(count) differs from the \(total) values in the buckets")
        }
        guard count > 0 else {
            guard sum == 0, minimum == 0, maximum == 0 else {
                throw reject(.sum, "an empty histogram must have sum, min and max 0")
            }
            self.init()
            return
        }
        let first = pairs.first.map { Int($0[0]) }
        let last = pairs.last.map { Int($0[0]) }
        guard minimum <= maximum, HistogramLayout.index(ofNanos: minimum) == first,
            HistogramLayout.index(ofNanos: maximum) == last
        else {
            throw reject(.min, "min \(minimum) and max \(maximum) do not lie in the first and last buckets")
        }
        let (lowest, lowOverflow) = minimum.multipliedReportingOverflow(by: count)
        let (highest, highOverflow) = maximum.multipliedReportingOverflow(by: count)
        guard sum == .max || (!lowOverflow && sum >= lowest && (highOverflow || sum <= highest)) else {
            throw reject(.sum, "sum \(sum) cannot be the total of \(count) values between min and max")
        }
        self.init(bucketCounts: counts, sumNanos: sum, minNanos: minimum, maxNanos: maximum)
    }

    private static func explain(_ error: DecodingError) -> String {
        switch error {
        case .dataCorrupted(let context), .keyNotFound(_, let context), .typeMismatch(_, let context),
            .valueNotFound(_, let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            let detail =
                if case .keyNotFound(let key, _) = error { "missing key \"\(key.stringValue)\"" } else {
                    context.debugDescription
                }
            return path.isEmpty ? detail : "\(path): \(detail)"
        @unknown default:
            return "\(error)"
        }
    }
}
