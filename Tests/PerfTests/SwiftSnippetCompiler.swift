// Compiles a Swift snippet against the Perf module these tests were built with, for what a runtime
// test cannot express: that some code does not compile (a second end of a `~Copyable` span), and
// that the README's snippets do.
import Foundation
import Glibc
import PerfTestSupport

enum SwiftSnippetCompiler {
    struct Result {
        /// swiftc's raw wait status.
        var status: Int32
        /// stdout and stderr, merged.
        var output: String

        /// Exited 0 with no error and no warning.
        var compiledCleanly: Bool {
            ChildProcess.exitedNormally(status) && ChildProcess.exitCode(status) == 0
                && !output.contains("error:") && !output.contains("warning:")
        }
    }

    /// Compiles `source` (declarations only: parsed as a library, `import Perf` prepended) through
    /// the mandatory SIL passes, where the ownership checker runs: `-typecheck` stops before it and
    /// accepts a noncopyable value consumed twice.
    static func compile(_ source: String) throws -> Result {
        let scratch = try TemporaryDirectory("snippet")
        defer { scratch.remove() }
        let file = scratch.file("Snippet.swift")
        try ("import Perf\n\n" + source + "\n").write(to: file, atomically: true, encoding: .utf8)
        let products = BuildProducts.directory
        // The C modules Perf's interface imports (CPerfShims) are found through the module maps
        // SwiftPM generated beside them.
        let moduleMaps = try FileManager.default.contentsOfDirectory(atPath: products.path)
            .filter { $0.hasSuffix(".build") }.sorted()
            .map { products.appendingPathComponent($0).appendingPathComponent("module.modulemap").path }
            .filter { FileManager.default.fileExists(atPath: $0) }
        var arguments = [
            "-swift-version", "6", "-parse-as-library", "-emit-sil", "-o", "/dev/null",
            "-I", products.appendingPathComponent("Modules").path,
            "-module-cache-path", scratch.file("module-cache").path,
        ]
        for map in moduleMaps { arguments += ["-Xcc", "-fmodule-map-file=" + map] }
        arguments.append(file.path)
        let child = try ChildProcess(executable: "swiftc", arguments: arguments, mergeStandardError: true)
        var lines: [String] = []
        while let line = child.readLine(timeoutSeconds: 600) { lines.append(line) }
        if !child.reachedEndOfFile { child.send(SIGKILL) }
        return Result(status: child.wait(), output: lines.joined(separator: "\n"))
    }
}

/// The fenced code blocks of one README section, in order.
struct ReadmeSection {
    struct Block {
        /// The info string: `swift`, or empty for quoted output.
        var language: String
        var text: String
    }

    var blocks: [Block]

    /// The section that starts at the line `heading` and runs to the next heading of any level.
    init(_ heading: String) throws {
        let readme = try PerfGlobalStateTests.ReadmeExamplesTests.readme()
        let lines = readme.components(separatedBy: "\n")
        guard let start = lines.firstIndex(of: heading) else {
            throw ChildProcess.Failure(description: "README has no line \(heading)")
        }
        blocks = []
        var open: Block?
        for line in lines[(start + 1)...] {
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
            } else if line.hasPrefix("#") {
                break
            }
        }
    }

    var swift: [String] { blocks.filter { $0.language == "swift" }.map(\.text) }
    var quoted: [String] { blocks.filter { $0.language.isEmpty }.map(\.text) }
}
