// BudgetsFormat.md against the budgets parser: the keys it accepts at each level, the metrics and
// their units, and the complete example, which must parse and use every documented key.
import Foundation
import PerfReport
import Testing

@Suite struct ContractDocsBudgetsTests {
    static func article() throws -> ContractArticle { try ContractArticle(module: "PerfReport", "BudgetsFormat") }

    static func table() throws -> KeyPathTable {
        KeyPathTable(try article(), headings: ["## Keys"])
    }

    /// The parser's verdict on a budgets file: nil when it reads it, else its message.
    static func parse(_ text: String) -> String? {
        do {
            _ = try Budgets(bytes: Array(text.utf8), path: "budgets.json")
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// The list after `marker` in a parser message: `…; expected one of a, b, c` → [a, b, c].
    static func list(after marker: String, in message: String?) -> Set<String> {
        guard let message, let range = message.range(of: marker) else { return [] }
        let tail = message[range.upperBound...].prefix { $0 != "\n" && $0 != ")" }
        return Set(tail.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces.union(["."])) })
    }

    /// Where an unknown key can be offered to the parser, and the documented path of that object.
    static let objects: [(path: String, file: String)] = [
        ("", #"{"version":1,"zzUnknown":1}"#),
        ("defaults", #"{"version":1,"defaults":{"zzUnknown":1}}"#),
        ("<regression>", #"{"version":1,"defaults":{"regression":{"zzUnknown":1}}}"#),
        ("<regression>", #"{"version":1,"spans":[{"match":"a","regression":{"zzUnknown":1}}]}"#),
        ("spans[]", #"{"version":1,"spans":[{"match":"a","zzUnknown":1}]}"#),
        ("<limit>", #"{"version":1,"spans":[{"match":"a","limits":{"count":{"max":1,"zzUnknown":1}}}]}"#),
        ("<limit>", #"{"version":1,"hangs":{"count":{"max":1,"zzUnknown":1}}}"#),
        ("<limit>", #"{"version":1,"ledger":{"events":{"max":1,"zzUnknown":1}}}"#),
    ]

    @Test func theArticleFollowsItsOwnConvention() throws {
        let table = try Self.table()
        #expect(table.unreadable.isEmpty)
        #expect(table.entries.count > 25, "the keys table was found and read")
    }

    @Test func theKeysOfEachObjectAreTheOnesTheParserAccepts() throws {
        let table = try Self.table()
        for (path, file) in Self.objects {
            let message = Self.parse(file)
            let accepted = Self.list(after: "expected one of ", in: message)
            #expect(
                !accepted.isEmpty,
                "the parser refuses an unknown key and lists the known ones: \(message ?? "accepted")")
            let documented = Set(table.children(of: path).map(KeyPathTable.lastSegment))
            #expect(accepted == documented, "keys of `\(path.isEmpty ? "(top level)" : path)`")
        }
    }

    /// Metric tables by section: the metrics the parser names when refusing an unknown one, and
    /// the unit each is read in (a limit in its own unit parses, one in another unit does not).
    @Test(arguments: [
        ("## Span metrics", #"{"version":1,"spans":[{"match":"a","limits":{"METRIC":{"max":VALUE}}}]}"#),
        ("## Hang metrics", #"{"version":1,"hangs":{"METRIC":{"max":VALUE}}}"#),
        ("## Ledger metrics", #"{"version":1,"ledger":{"METRIC":{"max":VALUE}}}"#),
    ])
    func theMetricsAndUnitsAreTheParsers(heading: String, template: String) throws {
        let rows = try Self.article().table(under: heading)
        #expect(rows.count >= 4, "the table under \(heading) was found")
        func file(_ metric: String, _ value: String) -> String {
            template.replacingOccurrences(of: "METRIC", with: metric).replacingOccurrences(of: "VALUE", with: value)
        }
        let message = Self.parse(file("zzUnknown", "1"))
        #expect(Self.list(after: "use one of ", in: message) == Set(rows.map(\.key)), "\(message ?? "accepted")")
        let examples = ["count": "200", "duration": #""250ms""#, "percentage": #""10%""#]
        for row in rows {
            let unit = row.cells.first ?? ""
            try #require(examples[unit] != nil, "`\(row.key)` has unit '\(unit)', not count, duration or percentage")
            for (other, value) in examples {
                let accepted = Self.parse(file(row.key, value)) == nil
                #expect(accepted == (other == unit), "`\(row.key)` with \(value): the article says its unit is \(unit)")
            }
        }
    }

    @Test func theAutomaticMinimumSamplesAreTheDocumentedOnes() throws {
        for row in try Self.article().table(under: "## Span metrics") {
            let metric = try #require(BudgetMetric(rawValue: row.key))
            #expect(row.cells.count > 1 && row.cells[1] == String(metric.automaticMinimumSamples), "`\(row.key)`")
        }
    }

    @Test func theCompleteExampleParsesAndUsesEveryKey() throws {
        let example = try #require(try Self.article().codeBlock(under: "## A complete example"))
        #expect(Self.parse(example) == nil, "the example must parse: \(Self.parse(example) ?? "")")
        var walk = KeyPathWalk(try Self.table())
        walk.walk(try JSONValue.parse(Array(example.utf8)), name: "the complete example")
        #expect(walk.problems.isEmpty, "\(walk.problems.joined(separator: "\n"))")
        #expect(walk.unobserved.isEmpty, "documented keys the example does not use: \(walk.unobserved)")
        let overview = try #require(try Self.article().codeBlock(under: "## Overview"))
        #expect(Self.parse(overview) == nil, "the overview's example parses too")
    }

    @Test func theDocumentedDefaultsAreTheParsers() throws {
        let defaults = try Budgets(bytes: Array(#"{"version":1}"#.utf8), path: "budgets.json").defaults
        let rows = Dictionary(try Self.article().table(under: "## Keys").map { ($0.key, $0.cells) }) { $1 }
        func defaultCell(_ path: String) -> String? { rows[path].flatMap { $0.count > 2 ? $0[2] : nil } }
        #expect(defaultCell("defaults.level") == "`\(defaults.level.rawValue)`")
        #expect(defaultCell("defaults.onMissing") == "`\(defaults.onMissing.rawValue)`")
        #expect(defaultCell("defaults.onInsufficient") == "`\(defaults.onInsufficient.rawValue)`")
        #expect(defaults.minSamples == .automatic && defaultCell("defaults.minSamples") == "`auto`")
        #expect(defaultCell("<regression>.stat") == "`\(defaults.regression.stat.rawValue)`")
        #expect(
            defaultCell("<regression>.maxIncrease")
                == "`\(BudgetQuantity.format(defaults.regression.maxIncreasePercent, .percent))`")
        #expect(defaultCell("<regression>.minDelta") == "`\(defaults.regression.minDelta)`")
        #expect(defaultCell("<regression>.level") == "`\(defaults.regression.level.rawValue)`")
        #expect(defaultCell("<regression>.requireBaseline") == "`\(defaults.regression.requireBaseline)`")
    }
}
