// How payloads and reports are decoded: one set of `init(from:)` for two readings. Strict: a value
// of the wrong type is an error naming its key path. Lenient: such a value (or the list entry that
// holds it) is left out and listed, so an exporter still draws what a damaged report holds. The
// builder reads diagnostic payloads strictly; PerfReport reads reports either way.
import Foundation

/// A value read with the wrong type: where, and what was expected.
package struct DecodingProblem: Sendable, Equatable, CustomStringConvertible {
    /// The key path, e.g. `spans.db.get.count` or `ledger.events[3].ts`.
    package var path: String
    /// What is wrong, e.g. `expected a number`.
    package var message: String

    package init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    /// `"spans.db.get.count": expected a number`.
    package var description: String { "\"\(path)\": \(message)" }
}

/// A type read from a JSON value whose kind, in words, is more than its Swift name (a time read
/// from a string): how ``ReportDecodingError`` names what was expected.
package protocol DecodingNoun {
    /// What the value must be, e.g. `an ISO-8601 UTC time such as 2026-12-02T13:00:00.000Z`.
    static var decodingNoun: String { get }
}

/// The state of one decode, handed to every `init(from:)` through `JSONDecoder.userInfo`.
package final class ReportDecodingContext: @unchecked Sendable {
    /// Whether values of the wrong type are left out and listed rather than thrown.
    let lenient: Bool
    /// Diagnostic payloads only: skip the histogram maps and the intervals (most of the bytes).
    let skipsHistograms: Bool
    package private(set) var problems: [DecodingProblem] = []
    /// Set once the top-level `init(from:)` runs: a data-corrupted error before it is a syntax
    /// error (the decoder scans the whole input first), one after it is a value that does not fit.
    package var started = false

    package init(lenient: Bool, skipsHistograms: Bool = false) {
        self.lenient = lenient
        self.skipsHistograms = skipsHistograms
    }

    /// Throws `problem` when strict; notes it when lenient.
    func tolerate(_ problem: ReportDecodingError) throws {
        guard lenient else { throw problem }
        problems.append(problem.problem)
    }

    /// The decoder of diagnostic payloads (see ``LazyJSONDecoder``).
    func lazyDecoder() -> LazyJSONDecoder {
        var decoder = LazyJSONDecoder()
        decoder.userInfo[.reportDecoding] = self
        return decoder
    }
}

extension CodingUserInfoKey {
    /// Where a decoder's ``ReportDecodingContext`` sits in its `userInfo`.
    package static let reportDecoding = CodingUserInfoKey(rawValue: "perf.report.decoding")!
}

extension Decoder {
    /// The decode's context; `nil` under a plain `JSONDecoder`, which then reads strictly.
    package var reportContext: ReportDecodingContext? { userInfo[.reportDecoding] as? ReportDecodingContext }
}

/// A document-level rejection (not JSON, not a report, a newer version), thrown from inside
/// `init(from:)` and turned into a ``Perf/ReportError`` with the file's path.
package struct ReportDocumentError: Error {
    package var code: Perf.ReportError.Code
    package var message: String

    package init(_ code: Perf.ReportError.Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// An invalid file.
    package init(_ message: String) { self.init(.invalidReport, message) }
}

/// A value that does not decode, with its key path in words.
package struct ReportDecodingError: Error {
    package var problem: DecodingProblem

    /// Explains `error`, raised while decoding a `type` at `path` (the path of the error itself
    /// when it is deeper, e.g. a histogram's own field).
    package init(_ error: any Error, at path: [any CodingKey], expecting type: Any.Type) {
        if let known = error as? ReportDecodingError {
            self = known
            return
        }
        var location = path
        let message: String
        switch error as? DecodingError {
        case .typeMismatch(let expected, let context)?:
            if context.codingPath.count >= path.count { location = context.codingPath }
            message = "expected \(Self.noun(expected))"
        case .valueNotFound(let expected, let context)?:
            if context.codingPath.count >= path.count { location = context.codingPath }
            message = "expected \(Self.noun(expected)), found null"
        case .keyNotFound(let key, let context)?:
            location = context.codingPath + [key]
            message = "missing"
        case .dataCorrupted(let context)?:
            // JSONDecoder reports a number that does not fit the type (1.5 for an integer, 1e300
            // for Int64) as "not valid JSON" with no path; the path given is the right one.
            if !context.codingPath.isEmpty, context.debugDescription != Self.syntaxError {
                if context.codingPath.count >= path.count { location = context.codingPath }
                message = context.debugDescription
            } else {
                message = "expected \(Self.noun(type, fitting: true))"
            }
        default:
            message = "expected \(Self.noun(type, fitting: true))"
        }
        problem = DecodingProblem(path: Self.describe(location), message: message)
    }

    package init(path: [any CodingKey], message: String) {
        problem = DecodingProblem(path: Self.describe(path), message: message)
    }

    /// JSONDecoder's message for bytes that are not JSON.
    static let syntaxError = "The given data was not valid JSON."

    /// `spans.db.get.count`, `ledger.events[3].ts`.
    static func describe(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return text
    }

    /// The JSON type a Swift type is read from, in words.
    static func noun(_ type: Any.Type, fitting: Bool = false) -> String {
        if let named = type as? any DecodingNoun.Type { return named.decodingNoun }
        switch type {
        case is String.Type, is Substring.Type: return "a string"
        case is Bool.Type: return "true or false"
        case is Double.Type, is Float.Type: return "a number"
        case is Int.Type, is Int64.Type, is Int32.Type, is UInt64.Type, is UInt32.Type, is UInt.Type:
            return fitting ? "a whole number within range" : "a number"
        case is [String: Any].Type: return "an object"
        case is [Any].Type: return "an array"
        default:
            return fitting ? "a valid \(String(describing: type))" : "\(String(describing: type))"
        }
    }
}

/// Any key: span names, watchdog targets, a ledger line's open keys.
package struct ReportKey: CodingKey, Hashable {
    package var stringValue: String
    package var intValue: Int? { nil }

    package init(_ name: String) { stringValue = name }
    package init?(stringValue: String) { self.stringValue = stringValue }
    package init?(intValue: Int) { stringValue = String(intValue) }
}

extension KeyedDecodingContainer {
    /// The value at `key`; absent, `null` or of the wrong type is an error in either reading
    /// (it identifies the entry, which a lenient reading then leaves out whole).
    package func required<T: Decodable>(_ key: Key, as type: T.Type = T.self) throws -> T {
        do {
            return try decode(T.self, forKey: key)
        } catch {
            throw ReportDecodingError(error, at: codingPath + [key], expecting: T.self)
        }
    }

    /// The value at `key`, `nil` when absent or `null`; of the wrong type, an error (strict) or
    /// `nil` with a problem noted (lenient).
    package func optional<T: Decodable>(
        _ key: Key, _ context: ReportDecodingContext?, as type: T.Type = T.self
    ) throws -> T? {
        do {
            return try decodeIfPresent(T.self, forKey: key)
        } catch {
            try context.tolerate(ReportDecodingError(error, at: codingPath + [key], expecting: T.self))
            return nil
        }
    }

    /// The array at `key`, empty when absent or `null`. Not an array: an error or empty; an
    /// element that does not decode: an error or left out.
    package func list<T: Decodable>(
        _ key: Key, _ context: ReportDecodingContext?, of type: T.Type = T.self
    ) throws -> [T] {
        guard contains(key), try !decodeNil(forKey: key) else { return [] }
        var items: any UnkeyedDecodingContainer
        do {
            items = try nestedUnkeyedContainer(forKey: key)
        } catch {
            try context.tolerate(ReportDecodingError(error, at: codingPath + [key], expecting: [Any].self))
            return []
        }
        var result: [T] = []
        result.reserveCapacity(items.count ?? 0)
        while !items.isAtEnd {
            let path = codingPath + [key, IndexKey(items.currentIndex)]
            let element = try items.superDecoder()
            do {
                result.append(try T(from: element))
            } catch {
                try context.tolerate(ReportDecodingError(error, at: path, expecting: T.self))
            }
        }
        return result
    }

    /// The object at `key` as a dictionary, empty when absent or `null`; not an object and
    /// entries that do not decode as for ``list(_:_:of:)``.
    package func map<T: Decodable>(_ key: Key, _ context: ReportDecodingContext?, of type: T.Type = T.self) throws
        -> [String: T]
    {
        guard contains(key), try !decodeNil(forKey: key) else { return [:] }
        let members: KeyedDecodingContainer<ReportKey>
        do {
            members = try nestedContainer(keyedBy: ReportKey.self, forKey: key)
        } catch {
            try context.tolerate(ReportDecodingError(error, at: codingPath + [key], expecting: [String: Any].self))
            return [:]
        }
        var result: [String: T] = [:]
        result.reserveCapacity(members.allKeys.count)
        for member in members.allKeys {
            do {
                result[member.stringValue] = try members.decode(T.self, forKey: member)
            } catch {
                try context.tolerate(
                    ReportDecodingError(error, at: codingPath + [key, member], expecting: T.self))
            }
        }
        return result
    }
}

extension Optional where Wrapped == ReportDecodingContext {
    /// Without a context (a plain JSONDecoder) every problem is an error.
    package func tolerate(_ problem: ReportDecodingError) throws {
        guard let context = self else { throw problem }
        try context.tolerate(problem)
    }
}

/// An array index in a key path.
package struct IndexKey: CodingKey {
    package var intValue: Int?
    package var stringValue: String { "Index \(intValue ?? 0)" }

    package init(_ index: Int) { intValue = index }
    package init?(stringValue: String) { nil }
    package init?(intValue: Int) { self.intValue = intValue }
}
