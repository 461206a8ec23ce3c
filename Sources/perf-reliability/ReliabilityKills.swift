// SIGKILL scenarios at scale: the journal soak, facade children ending over-budget spans, and the
// crash story (a kill during an open bounded span and an ongoing hang, told by the next start).
import Foundation
import Glibc
import Perf
import PerfTestSupport

enum ReliabilityKills {
    /// Runs the existing journal soak (`perf-test-child journal-append soak`, which alternates 1
    /// and 2 writer threads) and turns its summary into a result line.
    static func journal(kills: Int) throws -> ScenarioResult {
        let child = try ChildProcess(
            executable: testChild, arguments: ["journal-append", "soak", "\(kills)"])
        var figures: [String: Double] = [:]
        while let line = child.readLine(timeoutSeconds: 600) {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, let value = Double(parts[1].trimmingCharacters(in: .whitespaces)) {
                figures[String(parts[0])] = value
            } else {
                progress(line)
            }
        }
        let status = child.wait()
        let done = Int(figures["kills"] ?? 0)
        let lost = Int(figures["lost"] ?? -1)
        return ScenarioResult(
            scenario: "SIGKILL: journal appends",
            done: "\(done) kills of `perf-test-child journal-append run` (\((done + 1) / 2) with 1 writer thread, "
                + "\(done / 2) with 2), \(Int(figures["acknowledged"] ?? 0)) acknowledged entries",
            target: "≥ \(kills) kills; 0 acknowledged entries lost",
            result: "\(lost) lost; \(Int(figures["torn tails observed"] ?? 0)) torn tails observed and dropped",
            pass: ChildProcess.exitedNormally(status) && ChildProcess.exitCode(status) == 0 && done >= kills
                && lost == 0,
            notes: "the soak starts a fresh journal every 50 kills; \(ChildProcess.describe(status))",
            counts: figures)
    }

    /// SIGKILLs `perf-test-child facade spans` (over-budget `Perf.begin`/`end` through the facade)
    /// after a random number of acknowledged ends; a fresh data directory every 50 kills.
    static func ledger(kills: Int, seed: UInt64) throws -> ScenarioResult {
        var random = SeededRandom(seed: seed)
        var tally = LedgerTally()
        var batchStart = 0
        while batchStart < kills {
            let directory = try ScratchDirectory("ledger-kill")
            defer { directory.remove() }
            var acknowledged: [Int] = []
            for _ in batchStart..<min(kills, batchStart + 50) {
                let target = 1 + Int(random.next() % 200)
                let child = try ChildProcess(
                    executable: testChild, arguments: ["facade", "spans", directory.path])
                guard child.readLines(until: { $0 == "ack \(target - 1)" }, timeoutSeconds: 60) != nil else {
                    throw ChildProcess.Failure(description: "facade child stopped before \(target) acks (seed \(seed))")
                }
                child.killAndWait()
                // Acks still in the pipe when the child died are acknowledged too.
                let acks = target + child.readRemainingLines().filter { $0.hasPrefix("ack ") }.count
                acknowledged.append(acks)
                tally.kills += 1
                tally.acknowledged += acks
                if lastByte(of: directory.url.appendingPathComponent(LedgerWriter.fileName)) != UInt8(ascii: "\n") {
                    tally.tornObserved += 1
                }
            }
            try tally.verify(directory: directory.url, acknowledged: acknowledged)
            batchStart += 50
        }
        return ScenarioResult(
            scenario: "SIGKILL: ledger (facade spans)",
            done: "\(tally.kills) kills of `perf-test-child facade spans` (over-budget `end()` in a loop), "
                + "\(tally.acknowledged) acknowledged ends",
            target: "≥ \(kills) kills; 0 acknowledged lines lost",
            result: "\(tally.lost) lost, \(tally.gaps) sessions with gaps; \(tally.tornObserved) torn tails observed, "
                + "\(tally.tornDropped) dropped by readers as malformed or torn",
            pass: tally.kills >= kills && tally.lost == 0 && tally.gaps == 0 && tally.crashedMissing == 0
                && tally.tornDropped == tally.tornObserved,
            notes: "seed \(seed); each batch of 50 kills shares a directory; every killed session but the "
                + "batch's last was reported `crashed` by the next child's install "
                + "(\(tally.crashedMissing) missing)",
            counts: [
                "kills": Double(tally.kills), "acknowledged": Double(tally.acknowledged), "lost": Double(tally.lost),
                "tornObserved": Double(tally.tornObserved), "tornDropped": Double(tally.tornDropped),
            ])
    }

    /// What the ledger kills found, accumulated over batches.
    struct LedgerTally {
        var kills = 0
        var acknowledged = 0
        var lost = 0
        var gaps = 0
        var tornObserved = 0
        var tornDropped = 0
        var crashedMissing = 0

        /// Each run wrote one session: its `crash.span` counts must be gapless from 0 and reach at
        /// least its acknowledged count; session starts give the runs' order.
        mutating func verify(directory: URL, acknowledged: [Int]) throws {
            let (events, summary) = try LedgerReader(directory: directory).readAll()
            let sessions = events.filter { $0.kind == .session && $0.name == "start" }.map(\.session)
            var counts: [String: [Int]] = [:]
            for event in events where event.kind == .span && event.name == "crash.span" {
                counts[event.session, default: []].append(event.count ?? -1)
            }
            for (run, acks) in acknowledged.enumerated() {
                let written = run < sessions.count ? counts[sessions[run]] ?? [] : []
                if written != Array(0..<written.count) { gaps += 1 }
                lost += max(0, acks - written.count)
            }
            tornDropped += summary.malformedLines + summary.tornTail
            let crashed = Set(events.filter { $0.kind == .session && $0.name == "crashed" }.map(\.session))
            crashedMissing += sessions.dropLast().filter { !crashed.contains($0) }.count
        }
    }

    /// Kills a child holding an open bounded span during a hang already journalled as fatal, then
    /// installs Perf on its directory as the next start would and reads what that start wrote.
    static func crashStory(kills: Int, seed: UInt64) throws -> ScenarioResult {
        var crashed = 0
        var orphaned = 0
        var fatal = 0
        var withCulprit = 0
        var durationErrors: [Double] = []
        var random = SeededRandom(seed: seed)
        for kill in 0..<kills {
            let directory = try ScratchDirectory("crash-story")
            defer { directory.remove() }
            let child = try ChildProcess(
                executable: testChild, arguments: ["reliability", "crash-story", directory.path])
            guard let lines = child.readLines(until: { $0 == "fatal" }, timeoutSeconds: 30),
                let blocked = lines.first(where: { $0.hasPrefix("blocked ") }).flatMap({ UInt64($0.dropFirst(8)) })
            else {
                throw ChildProcess.Failure(description: "crash-story child \(kill) never reported its fatal hang")
            }
            // Killed at a random point of the hang (1 to 3 s into it), so the fatal hang's length is
            // checked against how long it had really lasted, not against a constant.
            usleep(useconds_t(500_000 + random.next() % 2_000_000))
            let killedAt = DispatchTime.now().uptimeNanoseconds
            child.killAndWait()
            let lasted = Double(killedAt - blocked) / 1e6
            let before = try LedgerReader(directory: directory.url).readAll().events
            let childSession = before.first { $0.kind == .session && $0.name == "start" }?.session
            Perf.install(
                Perf.Configuration(
                    directory: directory.url, app: Perf.AppInfo(name: "next-start"), recording: .enabled))
            Perf.shutdown()
            let events = try LedgerReader(directory: directory.url).readAll().events
                .filter { $0.session == childSession }
            if events.contains(where: { $0.kind == .session && $0.name == "crashed" }) { crashed += 1 }
            if events.contains(where: { $0.kind == .span && $0.exit == "orphaned" && $0.name == "story.upload" }) {
                orphaned += 1
            }
            let fatalHangs = events.filter { $0.kind == .hang && $0.fatal == true }
            if !fatalHangs.isEmpty { fatal += 1 }
            if fatalHangs.contains(where: { $0.culprit?.contains("waitForHugeFeed") == true }) { withCulprit += 1 }
            if let duration = fatalHangs.first?.durationMs { durationErrors.append(abs(duration - lasted) / lasted) }
        }
        let worst = durationErrors.max() ?? 1
        let median = durationErrors.sorted().dropFirst(durationErrors.count / 2).first ?? 1
        return ScenarioResult(
            scenario: "Crash story",
            done: "\(kills) kills of `perf-test-child reliability crash-story` (open bounded keyed span + hang in "
                + "`usleep` journalled in progress, killed 1–3 s into it), each followed by a next `Perf.install` on its "
                + "directory",
            target: "crashed session, orphaned span and fatal hang naming the blocked function every time; fatal "
                + "hang's duration within 10 % of how long it had lasted",
            result: "crashed \(crashed)/\(kills), orphaned \(orphaned)/\(kills), fatal hang \(fatal)/\(kills), "
                + "naming `waitForHugeFeed` \(withCulprit)/\(kills); duration error median "
                + String(format: "%.1f %%, worst %.1f %%", median * 100, worst * 100),
            pass: crashed == kills && orphaned == kills && fatal == kills && withCulprit == kills
                && durationErrors.count == kills && worst <= 0.10,
            notes: "the culprit is blocked in a system call, so its stack is read without a signal",
            counts: [
                "kills": Double(kills), "crashed": Double(crashed), "orphaned": Double(orphaned),
                "fatal": Double(fatal), "culprit": Double(withCulprit), "worstDurationError": worst,
            ])
    }

    /// The last byte of a file, or nil when it is empty or missing.
    static func lastByte(of url: URL) -> UInt8? {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return nil }
        defer { try? handle.close() }
        guard let size = try? handle.seekToEnd(), size > 0 else { return nil }
        try? handle.seek(toOffset: size - 1)
        return (try? handle.read(upToCount: 1))?.first
    }
}
