// One rule for every JSON reader of the package: the ledger's line parser, the budgets reader, the
// lazy decoder and the report reader accept the same valid documents and refuse the same trailing
// comma, at the same place, where Foundation's JSONDecoder reads it.
import Foundation
import PerfCore
import PerfTestSupport
import Testing

@testable import Perf
@testable import PerfReport

@Suite struct JSONReadersAgreeTests {
    /// A budgets file, which is also an object each of the other readers takes.
    static let document =
        #"{"version":1,"defaults":{"level":"warn"},"spans":[{"match":"api.*","limits":{"p95":{"max":"250ms"}}},"#
        + #"{"match":"db","limits":{"count":{"range":[1,5]}},"message":"\u00e9"}]}"#

    struct Shape: Decodable, Equatable {
        struct Rule: Decodable, Equatable { var match: String }
        var version: Int
        var spans: [Rule]
    }

    static func ledgerObject(_ text: String) -> [String: LedgerLineParser.Value]? {
        Array(text.utf8).withUnsafeBufferPointer { LedgerLineParser.parseObject($0) }
    }

    static func lazy(_ text: String) -> Result<Shape, any Error> {
        Result { try LazyJSONDecoder().decode(Shape.self, from: Array(text.utf8)) }
    }

    @Test func everyReaderAcceptsTheSameValidDocument() throws {
        let pretty = Self.document.replacingOccurrences(of: ",", with: ",\n  ")
            .replacingOccurrences(of: ":", with: ": ")
        for text in [Self.document, pretty, " \r\n\t" + Self.document + "\n"] {
            _ = try JSONScanner(Array(text.utf8))
            let object = try #require(Self.ledgerObject(text))
            // An array of objects is a ledger value now (a span line's `children`), so the rules
            // read as objects, each with its match.
            #expect(object["version"] == .int(1))
            guard case .objects(let rules)? = object["spans"] else {
                Issue.record("spans read as \(String(describing: object["spans"])), not an array of objects")
                continue
            }
            #expect(rules.map { $0["match"] } == [.string("api.*"), .string("db")])
            let budgets = try Budgets(bytes: Array(text.utf8), path: "budgets.json")
            #expect(budgets.spans.map(\.match) == ["api.*", "db"] && budgets.spans[1].message == "é")
            #expect(try Self.lazy(text).get() == Shape(version: 1, spans: [.init(match: "api.*"), .init(match: "db")]))
        }
    }

    /// A comma before each `]` and `}` of the document in turn: each reader refuses it, and those
    /// that say where name the comma's line and column.
    @Test func everyReaderRefusesTheSameTrailingCommaAtTheSamePlace() throws {
        let bytes = Array(Self.document.utf8)
        var tried = 0
        for (offset, byte) in bytes.enumerated() where byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") {
            var changed = bytes
            changed.insert(UInt8(ascii: ","), at: offset)
            let text = String(decoding: changed, as: UTF8.self)
            let place = "line 1, column \(offset + 1): a trailing comma before '\(Character(Unicode.Scalar(byte)))'"
            let scanned = Result { () throws(JSONSyntaxError) in try JSONScanner(changed) }
            guard case .failure(let error) = scanned else {
                Issue.record("the scanner accepted \(text)")
                continue
            }
            #expect(error.kind == .trailingComma && error.offset == offset && error.description.hasPrefix(place))
            #expect(Self.ledgerObject(text) == nil, "\(text)")
            #expect(throws: BudgetsError.self, "\(text)") { try Budgets(bytes: changed, path: "budgets.json") }
            do {
                _ = try Budgets(bytes: changed, path: "budgets.json")
            } catch {
                #expect(error.description.contains(place), "\(error)")
            }
            guard case .failure(let failure) = Self.lazy(text),
                case .dataCorrupted(let context)? = failure as? DecodingError
            else {
                Issue.record("the lazy decoder accepted \(text)")
                continue
            }
            #expect((context.underlyingError as? JSONSyntaxError) == error, "\(text)")
            tried += 1
        }
        #expect(tried == 10)
    }

    /// JSONDecoder reads a report with a comma before its last `}`; the report reader, strict
    /// or lenient, refuses it and says where.
    @Test func aReportWithATrailingCommaIsRefusedWhereJSONDecoderReadsIt() throws {
        let golden = try [UInt8](Data(contentsOf: ReportFixture.golden))
        let close = try #require(golden.lastIndex(of: UInt8(ascii: "}")))
        var bytes = golden
        bytes.insert(UInt8(ascii: ","), at: close)
        _ = try JSONScanner(golden)
        let comma = close
        let before = bytes[..<comma]
        let line = before.count(where: { $0 == UInt8(ascii: "\n") }) + 1
        let lineStart = before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
        let column = String(decoding: bytes[lineStart..<comma], as: UTF8.self).unicodeScalars.count + 1
        #expect(
            (try? ReportDecodingContext(reading: .strict).decoder().decode(PerformanceReport.self, from: Data(bytes)))
                != nil)
        for reading in [PerformanceReport.Reading.strict, .lenient] {
            #expect(
                throws: Perf.ReportError(
                    .invalidReport, path: "comma.json",
                    "not valid JSON (line \(line), column \(column): a trailing comma before '}', which JSON does not "
                        + "allow; remove it)")
            ) {
                try PerformanceReport(bytes: bytes, path: "comma.json", reading: reading)
            }
        }
    }
}
