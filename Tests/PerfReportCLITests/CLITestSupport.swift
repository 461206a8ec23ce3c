// Shared by the CLI tests: the fixture data directory, temporary directories, and the built
// perf-report binary.
import Foundation

enum CLIFixture {
    /// The hand-made data directory of the report tests.
    static let data = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../PerfTests/Fixtures/report/data").standardizedFileURL
    static let golden = data.deletingLastPathComponent().appendingPathComponent("golden-report.json")

    /// `perf-report`, built next to the test bundle by `swift build --build-tests`.
    static let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        .appendingPathComponent("perf-report")

    /// A fresh directory, removed by the caller.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "perf-cli-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Runs the built binary; returns (stdout, stderr, status).
    static func runBinary(_ arguments: [String], in directory: URL) throws -> (String, String, Int32) {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read both pipes to the end before waiting, so a full pipe cannot block the child.
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self), process.terminationStatus
        )
    }
}
