// Reading JSON in PerfReport: every file is validated by the package's one scanner first, and
// what it refuses is said the same way for reports, budgets and Google Benchmark files.
import Foundation
import Perf
import PerfCore

extension JSONSyntaxError {
    /// `not valid JSON (truncated or corrupt)` when the text ends inside a value, else `not
    /// valid JSON (line 3, column 12: ...)` with the rule broken.
    var notJSON: String { kind == .truncated ? "not valid JSON (truncated or corrupt)" : "not valid JSON (\(self))" }
}

extension JSONScanner {
    /// `bytes` validated by ``JSONScanner`` and given as JSONSerialization gives them: objects
    /// as `[String: Any]`, arrays as `[Any]`, numbers and booleans as `NSNumber`, `null` as
    /// `NSNull`. A surrogate escape without its pair is an error here, as it is for
    /// JSONSerialization.
    static func foundationValue(_ bytes: [UInt8]) throws(JSONSyntaxError) -> Any {
        let scanner = try JSONScanner(bytes)
        let result = bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(JSONSyntaxError) in try foundationValue(buffer, scanner, at: scanner.root) }
        }
        return try result.get()
    }

    private static func foundationValue(
        _ bytes: UnsafeBufferPointer<UInt8>, _ scanner: JSONScanner, at start: Int
    ) throws(JSONSyntaxError) -> Any {
        switch bytes[start] {
        case UInt8(ascii: "{"):
            var object: [String: Any] = [:]
            for (name, value) in scanner.children(bytes, of: start) {
                object[try decodedString(bytes, at: name ?? start)] = try foundationValue(bytes, scanner, at: value)
            }
            return object
        case UInt8(ascii: "["):
            var array: [Any] = []
            for (_, value) in scanner.children(bytes, of: start) {
                array.append(try foundationValue(bytes, scanner, at: value))
            }
            return array
        case UInt8(ascii: "\""): return try decodedString(bytes, at: start)
        case UInt8(ascii: "t"): return NSNumber(value: true)
        case UInt8(ascii: "f"): return NSNumber(value: false)
        case UInt8(ascii: "n"): return NSNull()
        default:
            let text = String(decoding: bytes[start..<numberEnd(bytes, start)], as: UTF8.self)
            if let integer = Int64(text) { return NSNumber(value: integer) }
            return NSNumber(value: Double(text) ?? .nan)
        }
    }

    private static func decodedString(
        _ bytes: UnsafeBufferPointer<UInt8>, at start: Int
    ) throws(JSONSyntaxError) -> String {
        guard let string = string(bytes, at: start) else {
            throw JSONSyntaxError(.grammar, at: start, in: bytes, "a string with a surrogate escape without its pair")
        }
        return string
    }
}
