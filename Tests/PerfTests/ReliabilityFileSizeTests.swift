// A recording process under a file-size limit (`ulimit -f`) keeps running: lines past the limit
// are dropped, not the process (the default action of SIGXFSZ would kill it).
import Foundation
import Testing

@testable import Perf

@Suite struct ReliabilityFileSizeTests {
    private static let perfBench = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        .deletingLastPathComponent().appendingPathComponent("perf-bench")

    @Test func aWriterPastRLIMIT_FSIZESurvivesAndStaysWithinTheLimit() throws {
        let directory = try TemporaryDirectory("fsize")
        defer { directory.remove() }
        let limit = 16 * 1024
        let process = Process()
        process.executableURL = Self.perfBench
        // 300 over-budget lines of ~230 bytes each: about four times the limit.
        process.arguments = [
            "child", "reliability", "writer", directory.url.path, "fsize=\(limit)", "lines=300", "cap=\(1 << 20)",
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit, "killed by signal \(process.terminationStatus)")
        #expect(process.terminationStatus == 0)
        #expect(printed.hasSuffix("ack 299\ndone\n"))
        let size = try FileManager.default.attributesOfItem(atPath: directory.ledger.path)[.size] as? Int
        #expect(size.map { $0 <= limit } == true, "\(String(describing: size))")
        let (events, _) = try Perf.LedgerReader(directory: directory.url).readAll()
        #expect(events.contains { $0.kind == .span && $0.name == "reliability.write" })
    }
}
