// SpanPath.md names the code a span runs: every C function, Swift file and Swift symbol it names
// must exist, so the page cannot drift from the code it walks.
import Foundation
import Testing

@Suite struct ContractDocsSpanPathTests {
    /// Every Swift and C source of the package, concatenated.
    static func allSources() throws -> String {
        let root = ContractArticle.sources
        let files =
            FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }
            .filter { ["swift", "h", "c"].contains($0.pathExtension) } ?? []
        return try files.map { try String(contentsOf: $0, encoding: .utf8) }.joined(separator: "\n")
    }

    /// The backticked spans of `text` that match `pattern` (first capture group).
    static func named(_ pattern: String, in text: String) throws -> Set<String> {
        let regex = try NSRegularExpression(pattern: pattern)
        let range = NSRange(text.startIndex..., in: text)
        return Set(
            regex.matches(in: text, range: range).compactMap { match in
                Range(match.range(at: 1), in: text).map { String(text[$0]) }
            })
    }

    @Test func everyCFunctionTheSpanPathNamesExists() throws {
        let article = try ContractArticle(module: "Perf", "SpanPath")
        let headers = try Self.allSources()
        let functions = try Self.named(#"`(perf_[a-z0-9_]+)[`(]"#, in: article.text)
        #expect(functions.count >= 15, "\(functions)")
        for function in functions {
            let present = headers.contains("\(function)(")
            #expect(present, "\(function) is named in SpanPath.md but not in the sources")
        }
    }

    @Test func everySwiftFileAndSymbolTheSpanPathNamesExists() throws {
        let article = try ContractArticle(module: "Perf", "SpanPath")
        let sources = try Self.allSources()
        for file in try Self.named(#"`((?:[A-Za-z]+/)+[A-Za-z+]+\.swift)`"#, in: article.text) {
            let found =
                FileManager.default.enumerator(atPath: ContractArticle.sources.path)?
                .contains { ($0 as? String)?.hasSuffix(file) == true } ?? false
            #expect(found, "\(file) is named in SpanPath.md but is no source file")
        }
        // `Type.member` names: the member must be declared somewhere.
        for symbol in try Self.named(#"`[A-Z][A-Za-z]+\.([a-z][A-Za-z]+)[`(]"#, in: article.text) {
            let declared =
                sources.contains("func \(symbol)") || sources.contains("var \(symbol)")
                || sources.contains("let \(symbol)")
            #expect(declared, "\(symbol) is named in SpanPath.md but declared nowhere")
        }
    }
}
