// Every exit code of check and compare through the real binary, with the verdict file written on
// every path; seeded fuzzing of budgets files and reports never crashes.
import Foundation
import Perf
import PerfTestSupport
import Testing

@testable import PerfReportCLI

@Suite struct CheckExitCodeTests {
    /// A directory with the golden scenario's files.
    private func scenario() throws -> (URL, head: String, base: String, budgets: String) {
        let directory = try CLIFixture.temporaryDirectory()
        return (
            directory, try CheckFixture.write(CheckFixture.head, "head.json", in: directory),
            try CheckFixture.write(CheckFixture.base, "base.json", in: directory),
            try CheckFixture.write(CheckFixture.budgets, "budgets.json", in: directory)
        )
    }

    private func verdictFile(_ path: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func everyExitCodeThroughTheRealBinary() throws {
        let (directory, head, base, budgets) = try scenario()
        defer { try? FileManager.default.removeItem(at: directory) }
        let lenient = try CheckFixture.write(
            #"{"version":1,"spans":[{"match":"api.*","limits":{"count":{"min":1}}}]}"#, "lenient.json", in: directory)
        let absent = try CheckFixture.write(
            #"{"version":1,"spans":[{"match":"api.put","limits":{"count":{"min":1}}}]}"#, "absent.json", in: directory)
        let typo = try CheckFixture.write(
            #"{"version":1,"spans":[{"match":"api.*","limits":{"p95":{"max":800}}}]}"#, "typo.json", in: directory)
        let cases: [([String], ExitCode, String)] = [
            (["check", head, "--budgets", lenient], .success, "pass"),
            (["check", head, "--budgets", budgets, "--baseline", base], .breach, "fail"),
            (["check", head, "--format", "json"], .usage, "error"),
            (["check", head, "--budgets", budgets, "--format", "yaml"], .usage, "error"),
            // The -o after the problem is still honoured: the error verdict is written there.
            (["check", head, "--bogus", "--budgets", budgets], .usage, "error"),
            (["check", head, "--budgets", budgets, "--allow-debug=yes"], .usage, "error"),
            (["check", head, "--budgets", typo], .invalidInput, "error"),
            (
                ["check", head, "--budgets", budgets, "--baseline", directory.path + "/none.json"], .invalidInput,
                "error"
            ),
            (["check", budgets, "--budgets", budgets], .invalidInput, "error"),
            (["check", head, "--budgets", absent], .incompleteData, "incomplete"),
            (["compare", head, base], .breach, "fail"),
            (["compare", head, head], .success, "warn"),
            (["compare", head], .usage, "error"),
            (["compare", head, budgets], .invalidInput, "error"),
        ]
        for (index, (arguments, status, verdict)) in cases.enumerated() {
            let output = directory.appendingPathComponent("verdict-\(index).json").path
            let (stdout, stderr, exit) = try CLIFixture.runBinary(arguments + ["-o", output], in: directory)
            #expect(exit == status.rawValue, "\(arguments): \(stderr)")
            let file = try verdictFile(output)
            #expect(file["exitCode"] as? Int == Int(status.rawValue), "\(arguments)")
            #expect(file["verdict"] as? String == verdict, "\(arguments)")
            #expect(file["schema"] as? String == "perf-verdict")
            if status == .usage { #expect(stderr.hasPrefix("Error: ")) }
            if status == .invalidInput { #expect(stderr.hasPrefix("perf-report: ") && stderr.contains(directory.path)) }
            if arguments[0] == "check", [.success, .breach].contains(status) {
                #expect(stdout.isEmpty, "text goes to stderr")
            }
        }
    }

    @Test func aBreachedCheckPrintsTheIssueLineOnStderr() throws {
        let (directory, head, base, budgets) = try scenario()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (_, stderr, status) = try CLIFixture.runBinary(
            ["check", head, "--budgets", budgets, "--baseline", base], in: directory)
        #expect(status == 1)
        #expect(
            stderr.hasPrefix("✘ api.get p95 (error): expected ≤ 800ms, found 912ms (n=240) · baseline 798ms · +14.3%\n")
        )
    }

    @Test func currentRunsAggregateAndFlagsParse() throws {
        let (directory, head, base, budgets) = try scenario()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Two more runs with api.get's p95 under budget: the median run passes, the pessimistic fails.
        let fast = CheckFixture.report([
            "api.get": .init(count: 240, p50: 100, p95: 700, max: 900, site: "App/API.swift:88"),
            "api.list": .init(count: 50, p50: 10, p95: 14, max: 30, site: "App/List.swift:12"),
        ])
        let run2 = try CheckFixture.write(fast, "run2.json", in: directory)
        let run3 = try CheckFixture.write(fast, "run3.json", in: directory)
        let median = PerfReportCommand.run([
            "check", head, "--budgets", budgets, "--current", run2, "--current=\(run3)",
        ])
        #expect(median.status == .success, "\(median.stderr)")
        let verdict = PerfReportCommand.run(
            ["check", head, "--budgets", budgets, "--current", run2, "--current", run3, "--format", "json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(verdict.stdout.utf8)) as? [String: Any])
        #expect(object["reports"] as? [String] == [head, run2, run3])
        let pessimistic = PerfReportCommand.run(
            ["check", head, "--budgets", budgets, "--current", run2, "--current", run3, "--aggregate", "pessimistic"])
        #expect(pessimistic.status == .breach)
        let improvement = PerfReportCommand.run(["check", head, "--budgets", budgets, "--baseline", base])
        #expect(improvement.stderr.contains("↓ api.list p50 regression"))
        let strict = PerfReportCommand.run(
            ["check", run2, "--budgets", budgets, "--baseline", base, "--fail-on-improvement"])
        #expect(strict.status == .breach)
        #expect(PerfReportCommand.run(["check", run2, "--budgets", budgets, "--baseline", base]).status == .success)
        let help = PerfReportCommand.run(["check", "--help"])
        #expect(help.stdout.contains("--fail-on-improvement") && help.stdout.contains("--allow-debug"))
        #expect(help.stdout.hasPrefix("OVERVIEW: Check a performance report against budgets and a baseline."))
        #expect(help.stdout.contains("  4  incomplete data where the budgets demand it"))
        let compareHelp = PerfReportCommand.run(["compare", "-h"])
        #expect(compareHelp.stdout.hasPrefix("OVERVIEW: Compare two performance reports span by span."))
        #expect(compareHelp.stdout.contains("USAGE: perf-report compare <base> <head>"))
        #expect(compareHelp.stdout.contains("ARGUMENTS:\n  <base>"))
    }

    @Test func debugReportsNeedAllowDebugForTimeBudgets() throws {
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let debug = try CheckFixture.write(
            CheckFixture.report(
                [
                    "api.get": .init(count: 500, p50: 1, p95: 2, max: 3, site: "A/B.swift:1"),
                    "api.list": .init(count: 500, p50: 1, p95: 2, max: 3, site: "A/C.swift:1"),
                ], build: "debug"),
            "debug.json", in: directory)
        let budgets = try CheckFixture.write(CheckFixture.budgets, "budgets.json", in: directory)
        // Both files are valid: the budgets demand release timings the report lacks (exit 4, not 3).
        let verdictFile = directory.appendingPathComponent("verdict.json").path
        for format in ["text", "json", "junit"] {
            let refused = PerfReportCommand.run(
                ["check", debug, "--budgets", budgets, "--format", format, "-o", verdictFile])
            #expect(refused.status == ExitCode.incompleteData, "\(format)")
            #expect(refused.stdout.isEmpty, "\(format): nothing was checked")
            #expect(
                refused.stderr.hasPrefix("perf-report: refusing to check '\(debug)': it comes from a debug build")
                    && refused.stderr.contains("--allow-debug"), "\(format): \(refused.stderr)")
            let verdict = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: verdictFile)))
                    as? [String: Any])
            #expect(verdict["verdict"] as? String == "error" && verdict["exitCode"] as? Int == 4, "\(format)")
            #expect((verdict["error"] as? String)?.contains("debug build") == true)
        }
        #expect(PerfReportCommand.run(["check", debug, "--budgets", budgets, "--allow-debug"]).status == .success)
        // Count budgets are facts in any build: a debug report is checked as it is.
        let counts = try CheckFixture.write(
            #"{"version":1,"spans":[{"match":"api.*","limits":{"count":{"min":1}}}]}"#, "counts.json", in: directory)
        #expect(PerfReportCommand.run(["check", debug, "--budgets", counts]).status == .success)
    }

    /// A typo in an exact `match` is a missing span (exit 4) whose line, in every format, names
    /// the report's nearest span; a trailing comma in the budgets file is exit 3 naming its place.
    @Test func aMistypedMatchSuggestsTheSpanAndATrailingCommaIsRefused() throws {
        let (directory, head, _, _) = try scenario()
        defer { try? FileManager.default.removeItem(at: directory) }
        let typo = try CheckFixture.write(
            #"{"version":1,"spans":[{"match":"api.gte","limits":{"count":{"min":1}}}]}"#, "typo.json", in: directory)
        let expected = "∅ api.gte (error): expected present in the report, found nothing · did you mean api.get?"
        let text = PerfReportCommand.run(["check", head, "--budgets", typo])
        #expect(text.status == .incompleteData)
        #expect(text.stderr.contains(expected + "\n"), "\(text.stderr)")
        for format in ["json", "junit", "github"] {
            let result = PerfReportCommand.run(["check", head, "--budgets", typo, "--format", format])
            #expect(result.status == .incompleteData)
            #expect(result.stdout.contains("did you mean api.get?"), "\(format): \(result.stdout)")
        }
        let markdown = PerfReportCommand.run(["check", head, "--budgets", typo, "--format", "markdown"])
        #expect(markdown.stdout.contains("| nothing (did you mean api.get?) |"), "\(markdown.stdout)")

        let comma = try CheckFixture.write(
            "{\"version\": 1,\n \"spans\": [\n  {\"match\": \"api.get\", \"limits\": {\"count\": {\"min\": 1}}},\n ]\n}\n",
            "comma.json", in: directory)
        let refused = PerfReportCommand.run(["check", head, "--budgets", comma])
        #expect(refused.status == .invalidInput)
        #expect(
            refused.stderr
                == "perf-report: invalid budgets file '\(comma)': line 3, column 56: a trailing comma before ']', "
                + "which JSON does not allow; remove it\n")
    }

    /// Mutated budgets files and reports: whatever the bytes, the command answers with a
    /// contract exit code and a message, never a crash.
    @Test func fuzzedBudgetsAndReportsNeverCrash() throws {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let budgetsPath = directory.appendingPathComponent("budgets.json").path
        let reportPath = directory.appendingPathComponent("report.json").path
        let fragments = [
            "null", "true", "-1", "1e400", "\"\"", "\"5ms\"", "\"-5%\"", "[]", "{}", "[1,2]", "\"*\"", "\"a*?*b\"",
            "{\"max\":\"1ms\"}", "{\"range\":[2,1]}", "0.5", "\"\u{0}\"",
        ]
        for iteration in 0..<300 {
            let mutateBudgets = iteration % 2 == 0
            var budgets = Array(CheckFixture.budgets.utf8)
            var report = Array(CheckFixture.head.utf8)
            func mutate(_ bytes: inout [UInt8]) {
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    let position = Int.random(in: 0..<bytes.count, using: &random)
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0: bytes[position] = UInt8.random(in: 0...255, using: &random)
                    case 1:
                        bytes.removeSubrange(
                            position..<Swift.min(bytes.count, position + Int.random(in: 1...20, using: &random)))
                    case 2: bytes.insert(contentsOf: Array(fragments.randomElement(using: &random)!.utf8), at: position)
                    default: bytes = Array(bytes.prefix(position))
                    }
                    if bytes.isEmpty { return }
                }
            }
            if mutateBudgets { mutate(&budgets) } else { mutate(&report) }
            try Data(budgets).write(to: URL(fileURLWithPath: budgetsPath))
            try Data(report).write(to: URL(fileURLWithPath: reportPath))
            let result = PerfReportCommand.run(["check", reportPath, "--budgets", budgetsPath, "--format", "json"])
            #expect(
                [.success, .breach, .invalidInput, .incompleteData].contains(result.status),
                "seed \(seed), iteration \(iteration): \(result.stderr)")
            if result.status == .invalidInput {
                #expect(result.stderr.hasPrefix("perf-report: "), "seed \(seed), iteration \(iteration)")
            } else {
                #expect(result.stdout.hasPrefix("{\"baseline\":"), "seed \(seed), iteration \(iteration)")
            }
            let unparsable = (try? JSONSerialization.jsonObject(with: Data(mutateBudgets ? budgets : report))) == nil
            if unparsable {
                #expect(
                    result.status == .invalidInput, "seed \(seed), iteration \(iteration): unparsable input must exit 3"
                )
            }
        }
    }
}
