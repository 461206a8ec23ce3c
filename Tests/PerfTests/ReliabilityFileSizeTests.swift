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

    /// CI's case: the writer's stderr is a log file already past its limit, so the one warning
    /// install prints (span memory refused under the limit) fails with EFBIG. Before, that
    /// warning went through `FileHandle.write`, which traps on any error: SIGILL in the host.
    @Test func aWarningOnAStderrPastTheLimitDoesNotCrashTheHost() throws {
        let directory = try TemporaryDirectory("fsize-stderr")
        defer { directory.remove() }
        let limit = 16 * 1024
        let log = directory.url.appendingPathComponent("stderr.log")
        try Data(repeating: UInt8(ascii: "x"), count: 2 * limit).write(to: log)
        let (printed, status) = try ChildProcess.run(
            BuildProducts.testChild,
            [
                "reliability", "writer", directory.url.appendingPathComponent("data").path, "fsize=\(limit)",
                "lines=20", "cap=\(1 << 20)",
            ],
            standardErrorPath: log.path)
        #expect(ChildProcess.exitedNormally(status), "\(ChildProcess.describe(status))")
        #expect(printed.suffix(2) == ["ack 19", "done"])
    }

    /// A stderr on which every write fails (ENOSPC from `/dev/full`) while install warns about an
    /// unusable data directory: the host keeps running.
    @Test func aWarningOnAFullStderrDoesNotCrashTheHost() throws {
        let (printed, status) = try ChildProcess.run(
            BuildProducts.testChild, ["reliability", "writer", "/dev/null/not-a-directory", "lines=5"],
            standardErrorPath: "/dev/full")
        #expect(ChildProcess.exitedNormally(status), "\(ChildProcess.describe(status))")
        #expect(printed.suffix(2) == ["ack 4", "done"])
    }
}
