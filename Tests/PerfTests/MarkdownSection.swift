// The package's Markdown (README.md and the DocC articles) as tests read it: a document by its
// path, and the fenced code blocks of one of its sections, so the snippets readers copy are the
// ones the tests compile and run.
import Foundation
import PerfTestSupport

/// A Markdown document of the package, by its path from the package root.
enum PackageDocument {
    static let readme = "README.md"

    /// An article of the `Perf` catalog: `Sources/Perf/Perf.docc/<name>.md`.
    static func perfArticle(_ name: String) -> String { "Sources/Perf/Perf.docc/\(name).md" }

    static func text(_ path: String) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }
}

/// The fenced code blocks of one section of a Markdown document, in order.
struct MarkdownSection {
    struct Block {
        /// The info string: `swift`, or empty for quoted output.
        var language: String
        var text: String
    }

    var blocks: [Block]

    /// The section of `document` (a path from the package root) that starts at the line `heading`
    /// and runs to the next heading of any level.
    init(_ heading: String, in document: String = PackageDocument.readme) throws {
        let lines = try PackageDocument.text(document).components(separatedBy: "\n")
        guard let start = lines.firstIndex(of: heading) else {
            throw ChildProcess.Failure(description: "\(document) has no line \(heading)")
        }
        blocks = Self.blocks(in: lines[(start + 1)...], toNextHeading: true)
    }

    /// The fenced blocks of `lines`, up to the first heading outside a block if `toNextHeading`.
    static func blocks(in lines: ArraySlice<String>, toNextHeading: Bool) -> [Block] {
        var blocks: [Block] = []
        var open: Block?
        for line in lines {
            if var block = open {
                if line == "```" {
                    blocks.append(block)
                    open = nil
                } else {
                    block.text += block.text.isEmpty ? line : "\n" + line
                    open = block
                }
            } else if line.hasPrefix("```") {
                open = Block(language: String(line.dropFirst(3)), text: "")
            } else if toNextHeading && line.hasPrefix("#") {
                break
            }
        }
        return blocks
    }

    var swift: [String] { blocks.filter { $0.language == "swift" }.map(\.text) }
    var quoted: [String] { blocks.filter { $0.language.isEmpty }.map(\.text) }
}
