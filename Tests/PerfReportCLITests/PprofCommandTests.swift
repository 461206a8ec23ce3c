// `perf-report export --format pprof` through the real binary: a report built from a ledger with
// profiles gives a gzip file; without -o, or without profiles, it says why and writes nothing.
import Foundation
import PerfTestSupport
import Testing

@testable import PerfReportCLI

@Suite struct PprofCommandTests {
    /// A ledger of two profiled `api.get` lines and a `db.query` child (Tests/Fixtures/profile).
    static let data = TestFixtures.folder("profile").appendingPathComponent("data")

    /// Builds the fixture's report into `directory`; returns its path.
    static func buildReport(in directory: URL) throws -> String {
        let (_, stderr, status) = try CLIFixture.runBinary(
            ["build", "--dir", data.path, "-o", "report.json"], in: directory)
        #expect(status == 0, "\(stderr)")
        return directory.appendingPathComponent("report.json").path
    }

    @Test func aReportWithProfilesGivesAGzippedProfile() throws {
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = try Self.buildReport(in: directory)
        let (stdout, stderr, status) = try CLIFixture.runBinary(
            ["export", report, "--format", "pprof", "-o", "spans.pb.gz"], in: directory)
        #expect(status == 0, "\(stderr)")
        #expect(stdout == "spans.pb.gz\n")
        #expect(stderr.isEmpty)
        let bytes = [UInt8](try Data(contentsOf: directory.appendingPathComponent("spans.pb.gz")))
        #expect(bytes.prefix(3) == [0x1F, 0x8B, 0x08], "a gzip member")
        // Stored blocks: the profile's strings are readable in the file as they are.
        let text = String(decoding: bytes, as: UTF8.self)
        for expected in ["App.Store.load(id:)", "App.parse(_:)", "__read", "api.get", "s-profile/scope 7"] {
            #expect(text.contains(expected), "\(expected)")
        }
    }

    @Test func withoutAnOutputFileItIsAUsageError() throws {
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = try Self.buildReport(in: directory)
        let (stdout, stderr, status) = try CLIFixture.runBinary(["export", report, "--format", "pprof"], in: directory)
        #expect(status == 2)
        #expect(stdout.isEmpty)
        #expect(
            stderr.hasPrefix("Error: --format pprof writes a binary file, not text for stdout; give it one: -o <file>"))
    }

    @Test func aReportWithoutProfilesExitsFourAndWritesNothing() throws {
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (_, stderr, status) = try CLIFixture.runBinary(
            ["export", ExportCommandTests.report.path, "--format", "pprof", "-o", "out.pb.gz"], in: directory)
        #expect(status == 4)
        #expect(stderr.contains("no span line has a profile"))
        #expect(stderr.contains(ExportCommandTests.report.path))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("out.pb.gz").path))
    }
}
