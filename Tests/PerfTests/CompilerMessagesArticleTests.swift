// The CompilerMessages article stays true as the toolchain changes: each form it shows failing
// must fail with the message quoted after it, and every other example must compile cleanly.
import Foundation
import PerfTestSupport
import Testing

@Suite struct CompilerMessagesArticleTests {
    /// One Swift example of the article: a form that fails (with the compiler's output quoted in
    /// the untyped block right after it) or one that compiles.
    struct Example {
        var source: String
        /// The lines of the quoted output, if this form must fail.
        var quoted: [String]?
        /// `// main.swift` as the first line makes it a program's main.swift.
        var form: SwiftSnippetCompiler.Form {
            source.hasPrefix("// main.swift\n") ? .mainFile : .declarations
        }
    }

    static func examples() throws -> [Example] {
        let article = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/Perf/Perf.docc/CompilerMessages.md")
        let lines = try String(contentsOf: article, encoding: .utf8).components(separatedBy: "\n")
        var examples: [Example] = []
        for block in MarkdownSection.blocks(in: lines[...], toNextHeading: false) {
            switch block.language {
            case "swift":
                examples.append(Example(source: block.text))
            case "":
                guard let last = examples.indices.last, examples[last].quoted == nil else {
                    throw ChildProcess.Failure(description: "a quoted block follows no Swift example:\n\(block.text)")
                }
                examples[last].quoted = block.text.split(separator: "\n").map(String.init)
            default:
                throw ChildProcess.Failure(description: "a block of unknown kind \(block.language)")
            }
        }
        return examples
    }

    @Test func eachWrongFormFailsWithTheQuotedMessage() throws {
        let wrong = try Self.examples().filter { $0.quoted != nil }
        #expect(wrong.count >= 10)
        for example in wrong {
            let result = try SwiftSnippetCompiler.compile(example.source, as: example.form)
            #expect(!result.compiledCleanly, "compiled, though the article says it fails:\n\(example.source)")
            for line in example.quoted ?? [] {
                #expect(
                    result.output.contains(line),
                    "swiftc no longer says \(line) for:\n\(example.source)\nit says:\n\(result.output)")
            }
        }
    }

    @Test func eachFixCompiles() throws {
        let fixes = try Self.examples().filter { $0.quoted == nil }
        #expect(fixes.count >= 8)
        for example in fixes {
            let result = try SwiftSnippetCompiler.compile(example.source, as: example.form)
            #expect(
                result.compiledCleanly,
                "\(ChildProcess.describe(result.status)) for:\n\(example.source)\nswiftc says:\n\(result.output)")
        }
    }
}
