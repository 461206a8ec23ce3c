// Bad data directories: each gives one ReportError naming the path and the problem, never a crash.
import Foundation
import Glibc
import PerfTestSupport
import Testing

@testable import Perf

@Suite struct ReportInputTests {
    private func buildError(_ directory: URL) -> Perf.ReportError? {
        do {
            _ = try ReportBuilder(directory: directory).build()
            return nil
        } catch {
            return error
        }
    }

    @Test func missingDirectory() {
        let error = buildError(URL(fileURLWithPath: "/nonexistent/perf-\(getpid())"))
        #expect(error?.code == .missingDirectory)
        #expect(error?.description == "cannot read data directory '/nonexistent/perf-\(getpid())': no such directory")
    }

    @Test func aFileInsteadOfADirectory() throws {
        let directory = try TemporaryDirectory("report")
        defer { directory.remove() }
        try Data("x".utf8).write(to: directory.ledger)
        #expect(buildError(directory.ledger)?.code == .missingDirectory)
    }

    @Test func emptyDirectory() throws {
        let directory = try TemporaryDirectory("report")
        defer { directory.remove() }
        let error = buildError(directory.url)
        #expect(error?.code == .emptyDirectory)
        #expect(error?.description.contains(directory.url.path) == true)
    }

    @Test func ledgerOfRandomBytes() throws {
        let directory = try TemporaryDirectory("report")
        defer { directory.remove() }
        var random = SeededRandom(seed: 42)
        var bytes = (0..<100_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        bytes.append(UInt8(ascii: "\n"))
        try Data(bytes).write(to: directory.ledger)
        let error = buildError(directory.url)
        #expect(error?.code == .invalidLedger)
        #expect(error?.description.contains(LedgerWriter.fileName) == true)
    }

    @Test(.enabled(if: geteuid() != 0, "root reads any directory"))
    func directoryWithoutReadPermission() throws {
        let directory = try TemporaryDirectory("report")
        defer {
            chmod(directory.url.path, 0o700)
            directory.remove()
        }
        try Data("{}\n".utf8).write(to: directory.ledger)
        chmod(directory.url.path, 0)
        let error = buildError(directory.url)
        #expect(error?.code == .unreadable)
        #expect(error?.description.contains("permission denied") == true)
    }

    @Test func unreadableLedgerFileIsReported() throws {
        let directory = try TemporaryDirectory("report")
        defer { directory.remove() }
        // A directory where the ledger file should be: open succeeds, read fails with EISDIR,
        // which even root cannot read past.
        try FileManager.default.createDirectory(at: directory.ledger, withIntermediateDirectories: false)
        let error = buildError(directory.url)
        #expect(error?.code == .unreadable)
        #expect(error?.description.contains(LedgerWriter.fileName) == true)
    }

    @Test func aLiveDirectoryWithAPayloadBeingWrittenIsReadAsIs() throws {
        let copy = try ReportFixture.copy()
        defer { copy.remove() }
        let before = try ReportBuilder(directory: copy.url).build()
        // What a writer mid-way leaves: a temporary payload and a line without its newline.
        let folder = copy.url.appendingPathComponent("perf-diagnostics")
        try Data("{\"schema\":\"perf-diag".utf8).write(
            to: folder.appendingPathComponent(".tmp-1-20991231T000000000Z-x.json"))
        let after = try ReportBuilder(directory: copy.url).build()
        #expect(after == before)
    }
}
