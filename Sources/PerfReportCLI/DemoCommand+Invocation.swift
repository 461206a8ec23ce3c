// How the user runs perf-report, so the commands the demo suggests run as typed: `swift run
// perf-report …` from a package checkout, `perf-report …` when it is on PATH.
import Foundation

extension DemoCommand {
    /// The words that start a perf-report command the way this process was started.
    ///
    /// - An executable under a `.build` folder is SwiftPM's build product, run by `swift run`:
    ///   `swift run perf-report`, with `-c release` when it is the release build (a debug `swift
    ///   run` would build everything again) and `--package-path <root>` when the current directory
    ///   is not the package's.
    /// - Otherwise a program name without a slash was found on PATH: `perf-report`.
    /// - Otherwise the path it was started by, which works from the same directory.
    ///
    /// - Parameters:
    ///   - executable: the running executable's resolved path (`/proc/self/exe`).
    ///   - argument0: the program name as started (`CommandLine.arguments[0]`).
    ///   - currentDirectory: the current directory.
    static func invocation(executable: String, argument0: String, currentDirectory: String) -> String {
        let components = executable.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        if let buildIndex = components.lastIndex(of: ".build"), buildIndex + 2 <= components.count - 1 {
            let root = "/" + components[..<buildIndex].joined(separator: "/")
            let configuration = components[components.count - 2]
            var words = ["swift", "run"]
            if configuration != "debug" { words += ["-c", configuration] }
            if standardized(root) != standardized(currentDirectory) { words += ["--package-path", shellQuoted(root)] }
            return (words + ["perf-report"]).joined(separator: " ")
        }
        if !argument0.isEmpty, !argument0.contains("/") { return "perf-report" }
        return shellQuoted(argument0.isEmpty ? executable : argument0)
    }

    /// ``invocation(executable:argument0:currentDirectory:)`` for this process.
    static var currentInvocation: String {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        return invocation(
            executable: executable, argument0: CommandLine.arguments.first ?? "",
            currentDirectory: FileManager.default.currentDirectoryPath)
    }

    /// `text` as one shell word: unchanged when it holds only characters no shell treats
    /// specially, else in single quotes.
    static func shellQuoted(_ text: String) -> String {
        let plain = text.unicodeScalars.allSatisfy {
            CharacterSet.alphanumerics.contains($0) || "/._-+:=@%,".unicodeScalars.contains($0)
        }
        if plain && !text.isEmpty { return text }
        return "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    private static func standardized(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
    }
}
