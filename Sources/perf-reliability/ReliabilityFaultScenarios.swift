// The injected-fault scenarios: each runs `perf-test-child reliability writer` under one
// fault (see ReliabilityFaultInjection) and states what it expects of the ledger and stderr.
import Foundation
import Glibc
import Perf
import PerfTestSupport

extension ReliabilityFaultInjection {
    /// A few ledger writes fail with EIO, then writing works again.
    static func writeEIO() throws -> ScenarioResult {
        let name = "Fault: ledger writes fail with EIO (strace)"
        if let why = straceUnavailable() { return .skipped(scenario: name, target: straceTarget, why: why) }
        let lines = 300
        let run = try run(lines: lines, cap: 1 << 20, wrapper: strace("write:error=EIO:when=51..80"))
        let missing = run.missing(lines)
        let pass =
            run.exitedCleanly && run.invalid == 0 && run.dropped == [30] && missing.count == 30
            && missing.last.map { $0 - missing[0] == 29 } == true && run.messages.count == 1
            && run.sessionStatus == "terminated"
        return ScenarioResult(
            scenario: name,
            done: "\(lines) over-budget ends; writes 51–80 to perf-events.jsonl fail with EIO "
                + "(`-e inject=write:error=EIO:when=51..80 -P <ledger>`)",
            target: "30 lines lost in one run, reported as `dropped` 30; every other line kept and valid; one "
                + "stderr message; normal exit",
            result: run.summary + "; \(missing.count) ends missing", pass: pass,
            notes: run.messages.first ?? "", counts: counts(run, missing: missing.count))
    }

    /// The disk fills from the 200th ledger write on: for good, and then for 60 writes only.
    static func writeENOSPC() throws -> ScenarioResult {
        let name = "Fault: disk full, ENOSPC from the 200th ledger write (strace)"
        if let why = straceUnavailable() { return .skipped(scenario: name, target: straceTarget, why: why) }
        let lines = 300
        let full = try run(lines: lines, cap: 1 << 20, wrapper: strace("write:error=ENOSPC:when=201+"))
        let kept = full.spans
        let fullPass =
            full.exitedCleanly && full.invalid == 0 && kept == Array(0..<kept.count) && kept.count >= 190
            && full.dropped.isEmpty && full.messages.count == 1 && full.sessionStatus == "terminated"
        let returns = try run(lines: lines, cap: 1 << 20, wrapper: strace("write:error=ENOSPC:when=201..260"))
        let missing = returns.missing(lines)
        let returnsPass =
            returns.exitedCleanly && returns.invalid == 0 && returns.dropped == [60] && missing.count == 60
            && returns.messages.count == 1 && returns.sessionStatus == "terminated"
        // The whole process's disk fills (every write(2), not only the ledger's: the journal, the
        // session index, stderr): the session must still end `terminated`, not stay `active`.
        let whole = try run(
            lines: lines, cap: 1 << 20,
            wrapper: { data, _ in
                (
                    "strace",
                    [
                        "-f", "-qq", "-o", "/dev/null", "-e", "inject=write:error=ENOSPC:when=151+", testChild,
                        "quiet-writer", data.path, "\(lines)",
                    ]
                )
            })
        let wholePass =
            whole.exitedCleanly && whole.invalid == 0 && whole.spans == Array(0..<whole.spans.count)
            && whole.spans.count >= 100 && whole.sessionStatus == "terminated"
        return ScenarioResult(
            scenario: name,
            done: "\(lines) ends three times: ENOSPC on every ledger write from the 201st to the end; on writes "
                + "201–260 only; on every write(2) of the process from its 151st (`perf-test-child quiet-writer`)",
            target: "one stderr message; lines before the fault kept; the session ends `terminated` (not "
                + "`active`); when space returns, `dropped` 60 precedes the next line; normal exit",
            result: "full to the end: \(full.summary); space returns: \(returns.summary), \(missing.count) "
                + "ends missing; whole process: \(whole.summary)",
            pass: fullPass && returnsPass && wholePass,
            notes: "the session's end record is written ahead at its start and overwritten in place at its end "
                + "(no new block), so a full disk still records the end; " + (full.messages.first ?? ""),
            counts: ["keptWhileFull": Double(kept.count), "droppedReported": Double(returns.dropped.reduce(0, +))])
    }

    /// `rename(2)` of a full ledger fails with EXDEV: once, then at every rotation from the second.
    static func renameEXDEV() throws -> ScenarioResult {
        let name = "Fault: ledger rotation fails, rename EXDEV (strace)"
        if let why = straceUnavailable() { return .skipped(scenario: name, target: straceTarget, why: why) }
        let cap = 16 * 1024
        // Once: the second rotation fails, its retry (two lines later) works. Nothing is lost, and
        // no third rotation replaces the `.prev` the retry made.
        let onceLines = 170
        let once = try run(lines: onceLines, cap: cap, wrapper: strace("rename:error=EXDEV:when=2"))
        let first = once.spans.first ?? 0
        let oncePass =
            once.exitedCleanly && once.invalid == 0 && once.dropped.isEmpty
            && once.spans == Array(first..<onceLines) && once.messages.count == 1 && once.spans.count > 90
        // Always: `.prev` (the first rotation's) must survive whole, the file grows to twice the cap,
        // the rest is counted, and the attempts back off.
        let lines = 600
        let traceFile = try ScratchDirectory("rename-trace")
        defer { traceFile.remove() }
        let trace = traceFile.url.appendingPathComponent("strace.out").path
        let always = try run(
            lines: lines, cap: cap,
            wrapper: { data, child in
                let ledger = data.appendingPathComponent(LedgerWriter.fileName).path
                return (
                    "strace",
                    ["-f", "-qq", "-o", trace, "-P", ledger, "-e", "inject=rename:error=EXDEV:when=2+"]
                        + child
                )
            })
        let renames =
            ((try? String(contentsOfFile: trace, encoding: .utf8)) ?? "").split(separator: "\n")
            .filter { $0.contains("rename") }.count
        let lost = always.dropped.reduce(0, +)
        let alwaysPass =
            always.exitedCleanly && always.invalid == 0 && always.previous == Array(0..<always.previous.count)
            && always.previous.count > 50 && always.spans == Array(0..<always.spans.count)
            && always.spans.count + lost >= lines && always.messages.count == 1 && renames < lines / 8
            && always.sessionStatus == "terminated"
        return ScenarioResult(
            scenario: name,
            done: "cap 16 KiB; \(onceLines) ends with the 2nd rotation's rename failing once; \(lines) ends with "
                + "every rename from the 2nd failing (`-e inject=rename:error=EXDEV:when=2+ -P <ledger>`)",
            target: "no line on disk deleted (`.prev` kept whole), recording past the cap up to 2× then counted "
                + "in `dropped`, rotation attempts backed off (not one per line), one stderr message, normal exit",
            result: "once: \(once.summary); always: \(always.summary), `.prev` \(always.previous.count) lines "
                + "intact, \(renames) rename attempts on the ledger for \(lines) ends",
            pass: oncePass && alwaysPass, notes: always.messages.first ?? "",
            counts: [
                "keptAlways": Double(always.spans.count), "droppedAlways": Double(lost),
                "renameAttempts": Double(renames),
            ])
    }

    /// Reopening the ledger after a rotation fails once with EMFILE.
    static func openEMFILE() throws -> ScenarioResult {
        let name = "Fault: ledger reopen fails, openat EMFILE (strace)"
        if let why = straceUnavailable() { return .skipped(scenario: name, target: straceTarget, why: why) }
        // One rotation only (a second would move the gap report out of the two files).
        let lines = 100
        let run = try run(lines: lines, cap: 16 * 1024, wrapper: strace("openat:error=EMFILE:when=2"))
        let first = run.spans.first ?? 0
        let missing = run.missing(lines).filter { $0 >= first }
        let pass =
            run.exitedCleanly && run.invalid == 0 && run.dropped == [1] && missing.count == 1
            && run.messages.count == 1
        return ScenarioResult(
            scenario: name,
            done: "cap 16 KiB, \(lines) ends; the 2nd open of perf-events.jsonl (after the first rotation) "
                + "fails with EMFILE",
            target: "the one line lost reported as `dropped` 1, the next open works, one stderr message, "
                + "normal exit",
            result: run.summary + "; \(missing.count) end missing", pass: pass, notes: run.messages.first ?? "",
            counts: counts(run, missing: missing.count))
    }

    static func counts(_ run: Run, missing: Int) -> [String: Double] {
        [
            "spans": Double(run.spans.count), "droppedReported": Double(run.dropped.reduce(0, +)),
            "missing": Double(missing), "stderrMessages": Double(run.messages.count),
        ]
    }
}
