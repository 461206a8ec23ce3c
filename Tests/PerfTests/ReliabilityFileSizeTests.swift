// A recording process under a file-size limit (`ulimit -f`) keeps running: lines past the limit
// are dropped, not the process (the default action of SIGXFSZ would kill it).
import Foundation
import PerfTestSupport
import Testing

@testable import Perf

@Suite struct ReliabilityFileSizeTests {
    @Test func aWriterPastRLIMIT_FSIZESurvivesAndStaysWithinTheLimit() throws {
        let directory = try TemporaryDirectory("fsize")
        defer { directory.remove() }
        let limit = 16 * 1024
        // 300 over-budget lines of ~230 bytes each: about four times the limit.
        let (printed, status) = try ChildProcess.run(
            BuildProducts.testChild,
            ["reliability", "writer", directory.url.path, "fsize=\(limit)", "lines=300", "cap=\(1 << 20)"])
        #expect(ChildProcess.exitedNormally(status), "\(ChildProcess.describe(status))")
        #expect(ChildProcess.exitCode(status) == 0)
        #expect(printed.suffix(2) == ["ack 299", "done"])
        let size = try FileManager.default.attributesOfItem(atPath: directory.ledger.path)[.size] as? Int
        #expect(size.map { $0 <= limit } == true, "\(String(describing: size))")
        let (events, _) = try LedgerReader(directory: directory.url).readAll()
        #expect(events.contains { $0.kind == .span && $0.name == "reliability.write" })
    }
}
