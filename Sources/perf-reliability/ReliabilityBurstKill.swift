// SIGKILL in the middle of an 8-thread burst of over-budget ends, each kill followed by the next
// start on the same directory: every end that had returned must be in the ledger or counted in a
// `dropped` line.
import Foundation
import Glibc
import Perf
import PerfTestSupport

enum ReliabilityBurstKill {
    /// The child's writer threads, each with an 8-byte slot in the acknowledgement file.
    static let threads = 8

    /// One killed child: how many ends each thread had seen return, which of them the ledger
    /// holds, and the `dropped` counts of the sessions that can speak for it.
    struct Round {
        /// Per thread: `end()` calls that had returned when the kill came (indices below this).
        var acknowledged: [Int]
        /// The killed child's session and the next start's, which recovered it.
        var sessions: [String]
        /// Per thread: the acknowledged indices found in the ledger.
        var found: [Set<Int>]
        /// The sum of `count` on `dropped` lines of `sessions`, whatever their cause.
        var dropped = 0

        var acknowledgedTotal: Int { acknowledged.reduce(0, +) }
        var foundTotal: Int { found.reduce(0) { $0 + $1.count } }
        /// Acknowledged ends neither in the ledger nor covered by a `dropped` count.
        var lostUncounted: Int { max(0, acknowledgedTotal - foundTotal - dropped) }
    }

    /// What the one pass over the ledger saw besides the acknowledged lines.
    struct LedgerTally {
        var droppedByCause: [String: Int] = [:]
        /// `dropped` counts of sessions that belong to no round (none is expected).
        var droppedElsewhere = 0
        /// Lines of ends that had not been acknowledged when the kill came.
        var unacknowledgedLines = 0
        /// Acknowledged ends whose line appears more than once.
        var duplicateLines = 0
        /// `burst.kill` lines whose detail is not `t<thread>-i<iteration>-n<index>` of a round.
        var unattributedLines = 0
    }

    static func run(rounds: Int, seed: UInt64) throws -> ScenarioResult {
        progress("burst-kill: \(rounds) rounds, seed \(seed)")
        var random = SeededRandom(seed: seed)
        let scratch = try ScratchDirectory("burst-kill")
        defer { scratch.remove() }
        let data = scratch.file("data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let ackFile = scratch.file("acks")
        var killed: [Round] = []
        var notKilledBySignal: [String] = []
        var installMs: [Double] = []
        var nextStartMs: [Double] = []
        let started = monotonicSeconds()
        for iteration in 0..<rounds {
            try Data(count: threads * 8).write(to: ackFile)
            let child = try ChildProcess(
                executable: testChild, arguments: ["burst-kill", "run", data.path, ackFile.path, "\(iteration)"])
            guard let lines = child.readLines(until: { $0 == "ready" }, timeoutSeconds: 60) else {
                throw ChildProcess.Failure(description: "burst-kill child \(iteration) never got ready (seed \(seed))")
            }
            usleep(useconds_t(random.next() % 30_001))
            child.send(SIGKILL)
            let status = child.wait()
            if ChildProcess.terminatingSignal(status) != SIGKILL {
                notKilledBySignal.append(ChildProcess.describe(status))
            }
            let acknowledged = try readAcknowledgements(ackFile)
            let next = try ChildProcess.run(testChild, ["burst-kill", "recover", data.path], timeoutSeconds: 120)
            guard ChildProcess.exitedNormally(next.status), ChildProcess.exitCode(next.status) == 0 else {
                throw ChildProcess.Failure(
                    description: "the next start after kill \(iteration) failed: \(ChildProcess.describe(next.status))")
            }
            let figures = Dictionary(
                next.lines.compactMap { line -> (String, String)? in
                    let parts = line.split(separator: " ", maxSplits: 1)
                    return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
                }, uniquingKeysWith: { $1 })
            installMs += figures["install-ms"].flatMap(Double.init).map { [$0] } ?? []
            nextStartMs += figures["total-ms"].flatMap(Double.init).map { [$0] } ?? []
            let sessions = [session(in: lines), figures["session"]].compactMap { $0 }
            killed.append(
                Round(
                    acknowledged: acknowledged, sessions: sessions,
                    found: Array(repeating: [], count: threads)))
            if (iteration + 1) % 10 == 0 { progress("burst-kill: \(iteration + 1) of \(rounds) kills") }
        }
        let secondsPerRound = (monotonicSeconds() - started) / Double(max(1, rounds))
        let (tally, summary) = try readLedger(directory: data, into: &killed)
        return result(
            rounds: rounds, killed: killed, tally: tally, summary: summary, seed: seed,
            notKilledBySignal: notKilledBySignal, installMs: installMs, nextStartMs: nextStartMs,
            secondsPerRound: secondsPerRound)
    }

    /// The per-thread acknowledged counts the killed child left in the shared file.
    static func readAcknowledgements(_ file: URL) throws -> [Int] {
        let bytes = try Data(contentsOf: file)
        guard bytes.count >= threads * 8 else {
            throw ChildProcess.Failure(description: "acknowledgement file \(file.path) has \(bytes.count) bytes")
        }
        return bytes.withUnsafeBytes { raw in
            (0..<threads).map { Int(raw.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self)) }
        }
    }

    private static func session(in lines: [String]) -> String? {
        lines.first { $0.hasPrefix("session ") }.map { String($0.dropFirst("session ".count)) }
    }

    /// `t<thread>-i<iteration>-n<index>`, as the child writes it, or nil.
    static func parseDetail(_ detail: String) -> (thread: Int, iteration: Int, index: Int)? {
        let parts = detail.split(separator: "-")
        guard parts.count == 3, parts[0].first == "t", parts[1].first == "i", parts[2].first == "n",
            let thread = Int(parts[0].dropFirst()), let iteration = Int(parts[1].dropFirst()),
            let index = Int(parts[2].dropFirst())
        else { return nil }
        return (thread, iteration, index)
    }

    /// One pass over `.prev` and the current file after the last next start: the acknowledged
    /// lines found per round and thread, and the `dropped` counts per round (by session).
    static func readLedger(directory: URL, into rounds: inout [Round]) throws -> (LedgerTally, LedgerReader.Summary) {
        var roundOfSession: [String: Int] = [:]
        for (index, round) in rounds.enumerated() {
            for session in round.sessions { roundOfSession[session] = index }
        }
        var tally = LedgerTally()
        let summary = try LedgerReader(directory: directory).forEachEvent { event in
            if event.kind == .dropped {
                let count = event.count ?? 0
                if case .string(let cause) = event.extra["cause"] {
                    tally.droppedByCause[cause, default: 0] += count
                } else {
                    tally.droppedByCause["unstated", default: 0] += count
                }
                if let round = roundOfSession[event.session] {
                    rounds[round].dropped += count
                } else {
                    tally.droppedElsewhere += count
                }
                return
            }
            guard event.kind == .span, event.name == "burst.kill" else { return }
            guard let end = event.detail.flatMap(parseDetail), rounds.indices.contains(end.iteration),
                rounds[end.iteration].acknowledged.indices.contains(end.thread)
            else {
                tally.unattributedLines += 1
                return
            }
            if end.index >= rounds[end.iteration].acknowledged[end.thread] {
                tally.unacknowledgedLines += 1
            } else if !rounds[end.iteration].found[end.thread].insert(end.index).inserted {
                tally.duplicateLines += 1
            }
        }
        return (tally, summary)
    }

    static func result(
        rounds: Int, killed: [Round], tally: LedgerTally, summary: LedgerReader.Summary, seed: UInt64,
        notKilledBySignal: [String], installMs: [Double], nextStartMs: [Double], secondsPerRound: Double
    ) -> ScenarioResult {
        let acknowledged = killed.reduce(0) { $0 + $1.acknowledgedTotal }
        let found = killed.reduce(0) { $0 + $1.foundTotal }
        let dropped = killed.reduce(0) { $0 + $1.dropped }
        let lostUncounted = killed.reduce(0) { $0 + $1.lostUncounted }
        let roundsLosing = killed.filter { $0.lostUncounted > 0 }.count
        let causes =
            tally.droppedByCause.isEmpty
            ? "none"
            : tally.droppedByCause.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        return ScenarioResult(
            scenario: "SIGKILL: 8-thread burst",
            done: "\(killed.count) kills of `perf-test-child burst-kill run` (8 threads ending over-budget spans in a "
                + "loop, each `end()` acknowledged in a shared mapped file after it returned; killed 0–30 ms after "
                + "every thread's first end), each followed by the next start (`Perf.install` + `Perf.shutdown`) on "
                + "the same directory; \(acknowledged) acknowledged ends",
            target: "≥ \(rounds) kills; every acknowledged end in the ledger after the next start or counted in a "
                + "`dropped` line with its cause: 0 lost without a count",
            result: "\(found) of \(acknowledged) acknowledged ends in the ledger, \(acknowledged - found) missing; "
                + "\(dropped) counted in `dropped` lines (by cause, all sessions: \(causes)); \(lostUncounted) lost "
                + "without a count, in \(roundsLosing) of \(killed.count) kills",
            pass: killed.count >= rounds && notKilledBySignal.isEmpty && lostUncounted == 0,
            notes: "seed \(seed); one data directory for every kill; a kill's `dropped` lines are those of the killed "
                + "session and of the next start that recovered it; next start median "
                + String(format: "%.1f ms (install %.1f ms)", median(nextStartMs), median(installMs))
                + String(format: "; %.2f s per kill", secondsPerRound)
                + "; \(tally.unacknowledgedLines) ledger lines of ends not yet acknowledged at the kill, "
                + "\(tally.duplicateLines) duplicates, \(tally.unattributedLines) unattributable `burst.kill` lines, "
                + "\(tally.droppedElsewhere) dropped in other sessions; ledger read: \(summary.malformedLines) "
                + "malformed, \(summary.gluedLines) glued, \(summary.tornTail) torn tails"
                + (notKilledBySignal.isEmpty
                    ? ""
                    : "; children not ended by SIGKILL: "
                        + notKilledBySignal.joined(separator: ", ")),
            counts: [
                "kills": Double(killed.count), "acknowledged": Double(acknowledged), "found": Double(found),
                "dropped": Double(dropped), "lostUncounted": Double(lostUncounted),
                "roundsLosing": Double(roundsLosing), "unacknowledgedLines": Double(tally.unacknowledgedLines),
                "duplicateLines": Double(tally.duplicateLines), "nextStartMedianMs": median(nextStartMs),
                "secondsPerKill": secondsPerRound,
            ])
    }

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }
}
