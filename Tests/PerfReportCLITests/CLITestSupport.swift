// Shared by the CLI tests: the fixture data directory, temporary directories, and the built
// perf-report binary (a dependency of this target, so SwiftPM builds it beside the test bundle).
import Foundation
import PerfTestSupport

enum CLIFixture {
    /// The hand-made data directory of the report tests.
    static let data = ReportFixture.data
    static let golden = ReportFixture.golden

    /// `perf-report`, built next to the test bundle.
    static let binary = URL(fileURLWithPath: BuildProducts.executable("perf-report"))

    /// A fresh directory, removed by the caller.
    static func temporaryDirectory() throws -> URL { try TemporaryDirectory("cli").url }

    /// Runs the built binary in `directory`, with `environment` (default: this process's);
    /// returns (stdout, stderr, status).
    static func runBinary(_ arguments: [String], in directory: URL, environment: [String: String]? = nil) throws
        -> (String, String, Int32)
    {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.currentDirectoryURL = directory
        if let environment { process.environment = environment }
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
