// The built perf-report binary, end to end: the demo, then summary and build on what it left.
import Foundation
import Testing

@Suite struct EndToEndTests {
    @Test func demoThenSummaryThenBuildWithTheRealBinary() throws {
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (demoOut, demoErr, demoStatus) = try CLIFixture.runBinary(["demo", "--dir", "data"], in: directory)
        #expect(demoStatus == 0, "stderr: \(demoErr)")
        #expect(demoOut.contains("HANGS: 1 (0 fatal"), "\(demoOut)")
        #expect(demoOut.contains("DemoWorkload.parseHugeFeed()"), "the hang's culprit: \(demoOut)")
        #expect(demoOut.contains("demo.renderFrame"))
        // The slow fetch explains itself: its line lists the query and decodes that ran inside it.
        let ledger = try String(
            contentsOf: directory.appendingPathComponent("data").appendingPathComponent("perf-events.jsonl"),
            encoding: .utf8)
        let fetch = try #require(
            ledger.split(separator: "\n").first { $0.contains(#""name":"demo.fetchPage""#) }, "\(ledger)")
        #expect(fetch.contains(#""name":"demo.db.query""#) && fetch.contains(#""name":"demo.decode""#), "\(fetch)")
        #expect(fetch.contains(#""selfMs":"#), "\(fetch)")
        #expect(demoErr.contains("perf-report demo: "), "progress goes to stderr")
        #expect(demoOut.contains("/data (the ledger perf-events.jsonl, payloads in perf-diagnostics/)"), "\(demoOut)")
        // Under `swift run` the process start includes the build: the demo records no boot span.
        #expect(!demoOut.split(separator: "\n").contains { $0.hasPrefix("  boot ") }, "\(demoOut)")
        // The storm's 500 notes: the NOTES table's row and the sentence under it say the same.
        let stormRow = try #require(demoOut.split(separator: "\n").first { $0.hasPrefix("  demo.socket.reconnect ") })
        #expect(stormRow.split(separator: " ").dropFirst().compactMap { Int($0) } == [1, 499], "\(stormRow)")
        #expect(
            demoOut.contains(
                "Note floor: 500 demo.socket.reconnect notes in a burst: 1 written, 499 held back and counted, in 2 "
                    + "ledger line(s)"), "\(demoOut)")
        // The feed parse, the longest span line, ends with a URL's detail: the slowest list shows
        // its path, and never the user, host or query, which the privacy filter dropped before the
        // ledger line was written.
        let slowest = try #require(demoOut.components(separatedBy: "\nSLOWEST: ").dropFirst().first, "\(demoOut)")
        let feed = try #require(slowest.split(separator: "\n").dropFirst(2).first, "\(slowest)")
        #expect(feed.hasPrefix("  demo.parseFeed ") && feed.hasSuffix(" success    /v2/feeds/huge"), "\(feed)")
        for secret in ["reader", "hunter2", "example.com", "token", "secret"] {
            #expect(!demoOut.contains(secret), "\(secret) in \(demoOut)")
        }
        let report = directory.appendingPathComponent("performance-report.json")
        #expect(FileManager.default.fileExists(atPath: report.path))
        // The binary is SwiftPM's build product, run from another directory: the suggested command
        // is `swift run` with the package's path.
        let next = try #require(demoOut.split(separator: "\n").last.map(String.init), "\(demoOut)")
        #expect(next.hasPrefix("Next: swift run "), "\(next)")
        #expect(next.hasSuffix(" perf-report summary performance-report.json --format json"), "\(next)")
        let packagePath = next.components(separatedBy: " --package-path ").dropFirst().first?
            .components(separatedBy: " ").first
        #expect(
            packagePath.map { FileManager.default.fileExists(atPath: $0 + "/Package.swift") } == true,
            "the package's root: \(next)")

        let (summaryOut, _, summaryStatus) = try CLIFixture.runBinary(
            ["summary", report.path, "--format", "json"], in: directory)
        #expect(summaryStatus == 0)
        #expect(summaryOut.contains("\"schema\":\"perf-report-summary\""))

        // Building again from the demo's directory gives the demo's report, byte for byte.
        let (_, buildErr, buildStatus) = try CLIFixture.runBinary(
            ["build", "--dir", "data", "-o", "again.json"], in: directory)
        #expect(buildStatus == 0, "\(buildErr)")
        #expect(try Data(contentsOf: directory.appendingPathComponent("again.json")) == Data(contentsOf: report))

        let (_, missingErr, missingStatus) = try CLIFixture.runBinary(["build", "--dir", "nope"], in: directory)
        #expect(missingStatus == 3)
        #expect(missingErr.hasPrefix("perf-report: cannot read data directory '"))
        #expect(missingErr.hasSuffix("/nope': no such directory\n"))
        let (_, usageErr, usageStatus) = try CLIFixture.runBinary(["summary"], in: directory)
        #expect(usageStatus == 2)
        #expect(usageErr.hasPrefix("Error: "))
    }

    @Test func theDemoKeepsItsTemporaryDirectoryWhenAsked() throws {
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (out, err, status) = try CLIFixture.runBinary(["demo", "--keep", "-o", "r.json"], in: directory)
        #expect(status == 0, "stderr: \(err)")
        let line = try #require(out.split(separator: "\n").first { $0.hasPrefix("Data directory: ") }, "\(out)")
        let path = String(line.dropFirst("Data directory: ".count).prefix { $0 != " " })
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(path.contains("perf-demo-"), "\(line)")
        #expect(FileManager.default.fileExists(atPath: path + "/perf-events.jsonl"), "kept: \(path)")

        let (removedOut, removedErr, removedStatus) = try CLIFixture.runBinary(["demo", "-o", "s.json"], in: directory)
        #expect(removedStatus == 0, "stderr: \(removedErr)")
        #expect(removedOut.contains("Data directory: removed (rerun with --keep"), "\(removedOut)")
    }
}
