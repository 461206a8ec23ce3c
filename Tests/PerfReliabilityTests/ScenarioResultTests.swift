// A reliability scenario that cannot run here is SKIPPED: never counted as a pass, never failing
// the run, and told apart in the JSON line, the Markdown mark and the verdict.
import Foundation
import Perf
import Testing

@testable import perf_reliability

@Suite struct ScenarioResultTests {
    private static let environment = RunEnvironment(
        date: "2026-12-03T00:00:00Z", command: "scripts/reliability.sh", cpuModel: "cpu", cores: 2, memoryGiB: 1,
        kernel: "6.0", swiftVersion: "6.3", buildConfiguration: "release")

    private static func row(_ name: String, pass: Bool) -> ScenarioResult {
        ScenarioResult(scenario: name, done: "d", target: "t", result: "r", pass: pass)
    }

    private static func line(_ result: ScenarioResult) throws -> [String: Any] {
        let encoded = try JSONEncoder().encode(result)
        return try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any])
    }

    @Test func aSkippedScenarioIsNeverAPass() throws {
        let skipped = ScenarioResult.skipped(scenario: "Disk: tiny filesystem", target: "t", why: "no privilege")
        #expect(skipped.status == .skipped)
        #expect(!skipped.pass)
        let json = try Self.line(skipped)
        #expect(json["status"] as? String == "SKIPPED")
        #expect(json["pass"] as? Bool == false)
        #expect(json["skipped"] as? Bool == true)
        // Even a caller that says pass: true cannot make a skipped scenario pass.
        let forced = ScenarioResult(scenario: "s", done: "", target: "", result: "", pass: true, skipped: true)
        #expect(!forced.pass && forced.status == .skipped)
    }

    @Test func linesRoundTripAndOldLinesReadFromPass() throws {
        let skipped = ScenarioResult.skipped(scenario: "s", target: "t", why: "w")
        let decoded = try JSONDecoder().decode(ScenarioResult.self, from: JSONEncoder().encode(skipped))
        #expect(decoded.status == .skipped && !decoded.pass)
        // The script's own line for a scenario that timed out has no `skipped` key.
        let timedOut =
            #"{"scenario":"x","done":"did not finish","target":"t","result":"timed out","pass":false,"#
            + #""status":"MISS","notes":"","seconds":3,"counts":{}}"#
        #expect(try JSONDecoder().decode(ScenarioResult.self, from: Data(timedOut.utf8)).status == .miss)
        let old = #"{"scenario":"x","done":"","target":"","result":"","pass":true}"#
        #expect(try JSONDecoder().decode(ScenarioResult.self, from: Data(old.utf8)).status == .pass)
    }

    @Test func theReportMarksAndCountsSkippedApart() {
        let rows = [
            Self.row("ok", pass: true), ScenarioResult.skipped(scenario: "mount", target: "t", why: "no privilege"),
        ]
        let markdown = ReliabilityMarkdown.render(rows, environment: Self.environment)
        #expect(markdown.contains("| mount | not run: no privilege | t | SKIPPED (cannot run here) | SKIPPED |"))
        #expect(markdown.contains("| ok | d | t | r | PASS |"))
        #expect(markdown.contains("Verdict: every target that could be checked here met; 1 PASS, 0 MISS, 1 SKIPPED"))
        let missed = ReliabilityMarkdown.render(rows + [Self.row("bad", pass: false)], environment: Self.environment)
        #expect(missed.contains("Verdict: 1 of 3 targets missed; 1 PASS, 1 MISS, 1 SKIPPED"))
        let all = ReliabilityMarkdown.render([Self.row("ok", pass: true)], environment: Self.environment)
        #expect(all.contains("Verdict: every target met; 1 PASS, 0 MISS, 0 SKIPPED"))
    }
}
