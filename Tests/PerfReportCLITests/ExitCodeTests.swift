// build and summary through the command's entry point: success, and one clear line with status 3
// for each kind of bad input.
import Foundation
import Perf
import PerfTestSupport
import Testing

@testable import PerfReportCLI

@Suite struct ExitCodeTests {
    private func run(_ arguments: [String], environment: [String: String] = [:]) -> CommandResult {
        PerfReportCommand.run(arguments, environment: environment, progress: { _ in })
    }

    @Test func buildWritesTheSameBytesAsTheLibrary() throws {
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("report.json").path
        let result = run(["build", "--dir", CLIFixture.data.path, "-o", output])
        #expect(result.status == ExitCode.success)
        #expect(result.stdout == output + "\n")
        #expect(result.stderr.isEmpty)
        let written = try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))
        #expect(written == (try ReportBuilder(directory: CLIFixture.data).build()))
        let matchesGolden = written == (try [UInt8](Data(contentsOf: CLIFixture.golden)))
        #expect(matchesGolden, "the CLI's report of the fixture is the committed golden report")
        // PERF_DIR stands in for --dir.
        let viaEnvironment = directory.appendingPathComponent("env.json").path
        #expect(
            run(["build", "-o", viaEnvironment], environment: ["PERF_DIR": CLIFixture.data.path]).status == .success)
        #expect(try Data(contentsOf: URL(fileURLWithPath: viaEnvironment)) == Data(written))
    }

    @Test func summaryPrintsTextAndJSON() {
        let text = run(["summary", CLIFixture.golden.path])
        #expect(text.status == ExitCode.success)
        #expect(text.stdout.contains("MyService.Feed.parse()"))
        let json = run(["summary", CLIFixture.golden.path, "--format", "json"])
        #expect(json.status == ExitCode.success)
        #expect(json.stdout.hasPrefix("{\"app\":\"myservice 1.4.0 (build 812)\""))
    }

    @Test func badInputsExitThreeWithOneLineNamingTheFile() throws {
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let empty = directory.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: false)
        let garbage = directory.appendingPathComponent("garbage")
        try FileManager.default.createDirectory(at: garbage, withIntermediateDirectories: false)
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919) }).write(
            to: garbage.appendingPathComponent("perf-events.jsonl"))
        let truncated = directory.appendingPathComponent("truncated.json")
        let golden = try Data(contentsOf: CLIFixture.golden)
        try golden.prefix(golden.count / 3).write(to: truncated)
        let newer = directory.appendingPathComponent("newer.json")
        try Data(
            String(decoding: golden, as: UTF8.self).replacingOccurrences(
                of: "\"schemaVersion\":1,", with: "\"schemaVersion\":7,"
            ).utf8
        )
        .write(to: newer)
        let notReport = directory.appendingPathComponent("x.json")
        try Data("{\"spans\":{}}".utf8).write(to: notReport)
        let cases: [([String], String)] = [
            (
                ["build", "--dir", directory.appendingPathComponent("missing").path, "-o", "/dev/null"],
                "no such directory"
            ),
            (["build", "--dir", empty.path, "-o", "/dev/null"], "no perf-events.jsonl and no diagnostic payloads"),
            (["build", "--dir", garbage.path, "-o", "/dev/null"], "not a Perf ledger"),
            (["summary", truncated.path], "not valid JSON (truncated or corrupt)"),
            (["summary", newer.path], "schemaVersion 7 is newer than this perf-report reads (1)"),
            (["summary", notReport.path], "not a performance report (missing \"schema\")"),
            (["summary", directory.appendingPathComponent("absent.json").path], "no such file"),
        ]
        for (arguments, problem) in cases {
            let result = run(arguments)
            #expect(result.status == ExitCode.invalidInput, "\(arguments)")
            #expect(result.stderr.hasPrefix("perf-report: cannot "), "\(arguments)")
            #expect(result.stderr.contains(problem), "\(arguments): \(result.stderr)")
            #expect(result.stderr.filter { $0 == "\n" }.count == 1, "one line: \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        #expect(
            run(["summary", notReport.path]).stderr
                == "perf-report: cannot read report '\(notReport.path)': not a performance report (missing \"schema\")\n"
        )
    }

    @Test func mutatedReportsGiveZeroOrThreeNeverACrash() throws {
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let golden = try [UInt8](Data(contentsOf: CLIFixture.golden))
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        func next() -> Int { Int(truncatingIfNeeded: random.next() >> 1) }
        let file = directory.appendingPathComponent("fuzz.json")
        for _ in 0..<500 {
            var bytes = golden
            for _ in 0...(next() % 4) {
                let index = next() % bytes.count
                if next() % 2 == 0 {
                    bytes[index] = UInt8(truncatingIfNeeded: next())
                } else {
                    bytes.removeSubrange(index...)
                }
                if bytes.isEmpty { break }
            }
            try Data(bytes).write(to: file)
            let result = run(["summary", file.path])
            #expect(result.status == ExitCode.success || result.status == ExitCode.invalidInput, "seed \(seed)")
        }
    }
}
