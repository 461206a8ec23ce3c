// Bad input: mutated ledgers, session journals, reports and budgets files through the readers
// in-process (fast, most of the count), then through the real `perf-report` under `timeout`,
// checking exit codes against the contract.
import Foundation
import Glibc
import JournalKit
import Perf
import PerfCore
import PerfReport
import PerfTestSupport

enum ReliabilityBadInput {
    /// What the in-process and CLI runs saw.
    private struct Tally {
        var files = 0
        var accepted = 0
        var rejected = 0
        var invariantBroken: [String] = []
        var slowestSeconds = 0.0
        var cliRuns = 0
        var cliByStatus: [String: Int] = [:]
        var cliViolations: [String] = []
    }

    static func run(files: Int, cliRuns: Int, seed: UInt64, perfReport: String, budgetsPath: String) throws
        -> ScenarioResult
    {
        let scratch = try ScratchDirectory("bad-input")
        defer { scratch.remove() }
        let seeds = try MutationSeeds(in: scratch, perfReport: perfReport, budgetsPath: budgetsPath)
        var mutator = InputMutator(seed: seed)
        var tally = Tally()
        let baseline = try ReportFigures(bytes: seeds.report, path: "seed-report.json")
        let work = scratch.url.appendingPathComponent("work")
        try FileManager.default.copyItem(at: seeds.data, to: work)
        for index in 0..<files {
            let started = monotonicSeconds()
            let accepted: Bool
            switch index % 4 {
            case 0: accepted = try ledger(&mutator, seeds, work: work, tally: &tally)
            case 1: accepted = try journal(&mutator, seeds, scratch: scratch, index: index)
            case 2: accepted = report(&mutator, seeds, tally: &tally)
            default: accepted = budgets(&mutator, seeds, baseline: baseline)
            }
            tally.files += 1
            if accepted { tally.accepted += 1 } else { tally.rejected += 1 }
            tally.slowestSeconds = max(tally.slowestSeconds, monotonicSeconds() - started)
            if index % 2_000 == 1_999 { progress("bad input: \(index + 1) files") }
        }
        try cli(runs: cliRuns, &mutator, seeds, scratch: scratch, perfReport: perfReport, tally: &tally)
        let statuses = tally.cliByStatus.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        let pass =
            tally.invariantBroken.isEmpty && tally.cliViolations.isEmpty && tally.rejected > 0 && tally.accepted > 0
            && tally.slowestSeconds < 10
        return ScenarioResult(
            scenario: "Bad input",
            done: "\(tally.files) mutated files in-process (ledger + payload → LedgerReader, ReportBuilder, "
                + "ReportSummary; session journal → Journal.recover, SessionStore recovery; report → "
                + "ReportSummary, ReportFigures; budgets → Budgets, BudgetCheck) and \(tally.cliRuns) `perf-report` "
                + "runs (summary, check, compare, build, mangled arguments) under `timeout 10`",
            target: "0 crashes, 0 hangs, exit codes as contracted",
            result: "0 crashes in-process (\(tally.accepted) accepted, \(tally.rejected) rejected with a typed error; "
                + "slowest \(String(format: "%.2f", tally.slowestSeconds)) s); CLI exit codes "
                + "{\(statuses.joined(separator: ", "))}, \(tally.cliViolations.count) outside the contract",
            pass: pass,
            notes: "seed \(seed); exit 3 must name the file on stderr"
                + (tally.invariantBroken.first.map { "; invariant broken: \($0)" } ?? "")
                + (tally.cliViolations.first.map { "; first violation: \($0)" } ?? ""),
            counts: [
                "files": Double(tally.files), "accepted": Double(tally.accepted), "rejected": Double(tally.rejected),
                "cliRuns": Double(tally.cliRuns), "cliViolations": Double(tally.cliViolations.count),
                "slowestSeconds": tally.slowestSeconds,
            ])
    }

    /// A mutated ledger (and sometimes payload): every reader either delivers or counts, and a
    /// report that builds is one the summary accepts.
    private static func ledger(_ mutator: inout InputMutator, _ seeds: MutationSeeds, work: URL, tally: inout Tally)
        throws -> Bool
    {
        try Data(mutator.mutate(seeds.ledger, donor: seeds.report))
            .write(to: work.appendingPathComponent(LedgerWriter.fileName))
        if let name = seeds.payloadName {
            let payload = work.appendingPathComponent("perf-diagnostics").appendingPathComponent(name)
            try Data(mutator.mutate(seeds.payload, donor: seeds.ledger)).write(to: payload)
        }
        _ = try? LedgerReader(directory: work).readAll()
        guard let built = try? ReportBuilder(directory: work).build() else { return false }
        if (try? ReportSummary(bytes: built, path: "built.json")) == nil {
            tally.invariantBroken.append("a report built from a mutated ledger was rejected by the summary")
        }
        return true
    }

    /// A crashed session's journal with one damaged segment: recovery never throws over content.
    private static func journal(
        _ mutator: inout InputMutator, _ seeds: MutationSeeds, scratch: ScratchDirectory, index: Int
    )
        throws -> Bool
    {
        let copy = scratch.url.appendingPathComponent("journal-\(index % 8)")
        try? FileManager.default.removeItem(at: copy)
        try FileManager.default.copyItem(at: seeds.crashedSessions, to: copy)
        let journal = copy.appendingPathComponent("sessions/fuzzseed0000001")
        let segment = journal.appendingPathComponent(seeds.segmentNames[index % seeds.segmentNames.count])
        let original = try [UInt8](Data(contentsOf: segment))
        try Data(mutator.mutate(original, donor: seeds.ledger)).write(to: segment)
        let recovered = (try? Journal.recover(directory: journal)) != nil
        let sessions = SessionStore(directory: copy).recoverPriorSessions()
        return recovered && !sessions.isEmpty
    }

    private static func report(_ mutator: inout InputMutator, _ seeds: MutationSeeds, tally: inout Tally) -> Bool {
        let bytes = mutator.mutate(seeds.report, donor: seeds.budgets)
        let summary = try? ReportSummary(bytes: bytes, path: "mutated.json")
        let figures = try? ReportFigures(bytes: bytes, path: "mutated.json")
        if let summary { _ = (summary.text, summary.json) }
        return summary != nil || figures != nil
    }

    private static func budgets(_ mutator: inout InputMutator, _ seeds: MutationSeeds, baseline: ReportFigures)
        -> Bool
    {
        guard let budgets = try? Budgets(bytes: mutator.mutate(seeds.budgets, donor: seeds.report), path: "b.json")
        else { return false }
        let check = BudgetCheck(budgets: budgets, options: .init(allowDebug: true))
        guard let verdict = try? check.run(current: baseline, baseline: baseline) else { return false }
        _ = (verdict.text(), verdict.json())
        return true
    }

    /// Real `perf-report` runs on mutated files; status must be in the subcommand's contracted set,
    /// and an exit 3 must name the offending file on stderr.
    private static func cli(
        runs: Int, _ mutator: inout InputMutator, _ seeds: MutationSeeds, scratch: ScratchDirectory,
        perfReport: String, tally: inout Tally
    ) throws {
        let report = scratch.url.appendingPathComponent("cli-report.json")
        let budgets = scratch.url.appendingPathComponent("cli-budgets.json")
        let good = scratch.url.appendingPathComponent("good-report.json")
        let data = scratch.url.appendingPathComponent("cli-data")
        try Data(seeds.report).write(to: good)
        try FileManager.default.copyItem(at: seeds.data, to: data)
        for run in 0..<runs {
            try Data(mutator.mutate(seeds.report, donor: seeds.ledger)).write(to: report)
            try Data(mutator.mutate(seeds.budgets, donor: seeds.report)).write(to: budgets)
            try Data(mutator.mutate(seeds.ledger, donor: seeds.report))
                .write(to: data.appendingPathComponent(LedgerWriter.fileName))
            let (arguments, allowed, named): ([String], Set<Int32>, String?)
            switch run % 7 {
            case 0: (arguments, allowed, named) = (["summary", report.path], [0, 3], report.path)
            case 1: (arguments, allowed, named) = (["summary", report.path, "--format", "json"], [0, 3], report.path)
            case 2:
                (arguments, allowed, named) = (
                    ["check", good.path, "--budgets", budgets.path], [0, 1, 3, 4], budgets.path
                )
            case 3:
                (arguments, allowed, named) = (
                    ["check", report.path, "--budgets", budgets.path, "--baseline", good.path, "--format", "junit"],
                    [0, 1, 3, 4], nil
                )
            case 4: (arguments, allowed, named) = (["compare", good.path, report.path], [0, 1, 3, 4], report.path)
            case 5:
                let output = scratch.url.appendingPathComponent("built.json").path
                (arguments, allowed, named) = (["build", "--dir", data.path, "-o", output], [0, 3], nil)
            default:
                (arguments, allowed, named) = (mangledArguments(&mutator, report: report.path), [0, 1, 2, 3, 4], nil)
            }
            let child = try ChildProcess(
                executable: "timeout", arguments: ["-s", "KILL", "10", perfReport] + arguments, mergeStandardError: true
            )
            let output = child.readRemainingLines()
            let status = child.wait()
            tally.cliRuns += 1
            let code = ChildProcess.exitCode(status)
            // timeout(1) exits 124, or 137 when its SIGKILL was needed; 128 + n when perf-report died of n.
            let label =
                !ChildProcess.exitedNormally(status) || code > 128 && code != 137
                ? "crash" : code == 124 || code == 137 ? "hang" : "\(code)"
            tally.cliByStatus[label, default: 0] += 1
            let describedFile = code != 3 || named.map { path in output.contains { $0.contains(path) } } ?? true
            if !ChildProcess.exitedNormally(status) || !allowed.contains(code) || !describedFile {
                tally.cliViolations.append(
                    "perf-report \(arguments.joined(separator: " ")) → \(ChildProcess.describe(status)): "
                        + (output.first ?? ""))
            }
        }
    }

    /// A valid command line with one argument replaced, dropped or repeated.
    private static func mangledArguments(_ mutator: inout InputMutator, report: String) -> [String] {
        let base = ["check", report, "--budgets", report, "--format", "github"]
        let mangled = mutator.mutate(Array(base.joined(separator: "\u{1F}").utf8), donor: Array("--help -o x".utf8))
        // No NUL, and at most 8 KiB per argument: exec(2) refuses one over 128 KiB (E2BIG).
        return String(decoding: mangled, as: UTF8.self).split(separator: "\u{1F}")
            .map { String(decoding: $0.utf8.prefix(8192), as: UTF8.self) }.filter { !$0.contains("\u{0}") }
    }
}
