// The lazy decoder's document: the input validated by ``JSONScanner``, which also says where
// each object and array ends, so a container a type never reads is skipped without being read.
import PerfCore

package final class LazyJSONDocument {
    let bytes: [UInt8]
    private let scanner: JSONScanner
    var root: Int { scanner.root }

    init(_ bytes: [UInt8]) throws {
        self.bytes = bytes
        do {
            scanner = try JSONScanner(bytes)
        } catch {
            throw DecodingError.dataCorrupted(
                .init(codingPath: [], debugDescription: ReportDecodingError.syntaxError, underlyingError: error))
        }
    }

    // MARK: Scanning (on validated bytes)

    func skipSpace(_ index: inout Int) {
        bytes.withUnsafeBufferPointer { JSONScanner.skipSpace($0, &index) }
    }

    /// One past the string starting at `start` (a quote).
    func stringEnd(_ start: Int) -> Int {
        bytes.withUnsafeBufferPointer { JSONScanner.stringEnd($0, start) }
    }

    /// One past the number starting at `start`.
    func numberTokenEnd(_ start: Int) -> Int {
        bytes.withUnsafeBufferPointer { JSONScanner.numberEnd($0, start) }
    }

    /// One past the value starting at `start`.
    func valueEnd(_ start: Int) -> Int {
        bytes.withUnsafeBufferPointer { scanner.valueEnd($0, start) }
    }

    /// One past the object or array opening at `start`.
    func containerEnd(_ start: Int) -> Int { scanner.containerEnd(start, count: bytes.count) }

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

    /// The string at `start` (a quote), escapes decoded; nil for a surrogate escape without its
    /// pair.
    func string(at start: Int) -> String? {
        bytes.withUnsafeBufferPointer { JSONScanner.string($0, at: start) }
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
        let plain = index >= bytes.count || !JSONScanner.isNumberByte(bytes[index])
        if plain, digits > 0, digits == 1 || bytes[index - digits] != UInt8(ascii: "0") {
            guard !overflow else { return nil }
            if negative {
                guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
                return magnitude == UInt64(Int64.max) + 1 ? T(exactly: Int64.min) : T(exactly: -Int64(magnitude))
            }
            return T(exactly: magnitude)
        }
        guard let double = Double(numberText(at: start)), double == double.rounded() else { return nil }
        return T(exactly: double)
    }
}
