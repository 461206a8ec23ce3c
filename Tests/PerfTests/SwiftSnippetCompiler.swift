// Compiles a Swift snippet against the Perf module these tests were built with, for what a runtime
// test cannot express: that some code does not compile (a second end of a `~Copyable` span), and
// that the README's and the articles' snippets do, wherever a reader pastes them.
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

    /// How swiftc reads a snippet.
    enum Form {
        /// Declarations only, parsed as a library.
        case declarations
        /// A program's `main.swift`: statements run top to bottom and its top-level variables are
        /// globals, which a `~Copyable` value cannot be consumed from.
        case mainFile
    }

    /// Compiles `source` (`import Perf` prepended unless it has that line) through the mandatory
    /// SIL passes, where the ownership checker runs: `-typecheck` stops before it and accepts a
    /// noncopyable value consumed twice.
    static func compile(_ source: String, as form: Form = .declarations) throws -> Result {
        let scratch = try TemporaryDirectory("snippet")
        defer { scratch.remove() }
        let file = scratch.file(form == .mainFile ? "main.swift" : "Snippet.swift")
        let imports = source.components(separatedBy: "\n").contains("import Perf") ? "" : "import Perf\n\n"
        try (imports + source + "\n").write(to: file, atomically: true, encoding: .utf8)
        let products = BuildProducts.directory
        // The C modules Perf's interface imports (CPerfShims) are found through the module maps
        // SwiftPM generated beside them.
        let moduleMaps = try FileManager.default.contentsOfDirectory(atPath: products.path)
            .filter { $0.hasSuffix(".build") }.sorted()
            .map { products.appendingPathComponent($0).appendingPathComponent("module.modulemap").path }
            .filter { FileManager.default.fileExists(atPath: $0) }
        // One module cache for every snippet of every run: a cold cache costs each swiftc call
        // seconds of rebuilding the system's C modules; clang's cache takes concurrent users.
        var arguments = [
            "-swift-version", "6", "-emit-sil", "-o", "/dev/null",
            "-I", products.appendingPathComponent("Modules").path,
            "-module-cache-path", products.appendingPathComponent("snippet-module-cache").path,
        ]
        if form == .declarations { arguments.append("-parse-as-library") }
        for map in moduleMaps { arguments += ["-Xcc", "-fmodule-map-file=" + map] }
        arguments.append(file.path)
        let child = try ChildProcess(executable: "swiftc", arguments: arguments, mergeStandardError: true)
        var lines: [String] = []
        while let line = child.readLine(timeoutSeconds: 600) { lines.append(line) }
        if !child.reachedEndOfFile { child.send(SIGKILL) }
        return Result(status: child.wait(), output: lines.joined(separator: "\n"))
    }

    /// `program` (top-level code) as a reader pastes it into a function: its imports stay at the
    /// top of the file, everything else becomes the body of `func quickStart()`.
    static func insideAFunction(_ program: String) -> String {
        let lines = program.components(separatedBy: "\n")
        let imports = lines.filter { $0.hasPrefix("import ") }
        let body = lines.filter { !$0.hasPrefix("import ") }.map { $0.isEmpty ? $0 : "    " + $0 }
        return (imports + ["", "func quickStart() {"] + body + ["}"]).joined(separator: "\n")
    }
}
