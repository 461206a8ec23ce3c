// SIGKILL at a random moment of a child whose histograms and flight recorder live in span memory:
// the next start recovers every acknowledged span, its newest spans and a lower bound for the
// span it left open.
import Foundation
import Glibc
import Perf
import PerfCore
import PerfTestSupport

enum ReliabilitySpanMemory {
    /// What the kills found.
    struct Tally {
        var kills = 0
        var acknowledged = 0
        /// Kills after which fewer spans than acknowledged were recovered.
        var undercounted = 0
        /// Kills after which more spans than begun were recovered.
        var overcounted = 0
        /// Single-thread kills whose ring missed one of the newest acknowledged spans.
        var ringMisses = 0
        var orphansWithoutBound = 0
        var unreadable = 0
        var tornRecords = 0
        var tornSlots = 0
        var slots = 0
        /// Kills checked end to end through `Perf.install` and the recovered diagnostic payload.
        var endToEnd = 0
        var endToEndFailures = 0
    }

    static let ringCapacity = SpanMemoryProtocol.ringCapacity

    static func kills(_ kills: Int, seed: UInt64) throws -> ScenarioResult {
        var random = SeededRandom(seed: seed)
        var tally = Tally()
        for kill in 0..<kills {
            let directory = try ScratchDirectory("span-memory-kill")
            defer { directory.remove() }
            let threads = Int(random.next() % 3) + 1
            let target = Int(random.next() % 8_000) + 1
            let child = try ChildProcess(
                executable: testChild, arguments: ["span-memory", directory.path, "\(threads)"])
            var lines: [String] = []
            while lines.count < target, let line = child.readLine(timeoutSeconds: 60) { lines.append(line) }
            child.killAndWait()
            let acknowledged = (lines + child.readRemainingLines()).compactMap(Acknowledgement.init)
            guard !acknowledged.isEmpty else {
                throw ChildProcess.Failure(description: "span-memory child \(kill) acknowledged nothing (seed \(seed))")
            }
            tally.kills += 1
            tally.acknowledged += acknowledged.count
            if kill % 25 == 24 {
                try endToEnd(directory: directory.url, acknowledged: acknowledged, tally: &tally)
            } else {
                check(directory: directory.url, threads: threads, acknowledged: acknowledged, tally: &tally)
            }
            if kill % 50 == 49 { progress("span-memory-kill: \(kill + 1)/\(kills)") }
        }
        let tornRate = tally.slots == 0 ? 0 : Double(tally.tornSlots) / Double(tally.slots)
        return ScenarioResult(
            scenario: "SIGKILL: span memory (histograms and flight recorder)",
            done: "\(tally.kills) kills of `perf-test-child span-memory` (1–3 threads ending spans, each acknowledged "
                + "after `end()`, killed after 1–8,000 acknowledgements), \(tally.acknowledged) acknowledged spans; "
                + "\(tally.endToEnd) of them checked through the next `Perf.install` and its `recovered` payload",
            target: "every kill: recovered count ≥ acknowledged and ≤ begun; the newest acknowledged spans in the "
                + "recovered timeline; the open span orphaned with a non-zero lower bound; torn-entry rate reported",
            result:
                "\(tally.undercounted) undercounted, \(tally.overcounted) overcounted, \(tally.ringMisses) timelines "
                + "missing a newest span, \(tally.orphansWithoutBound) orphans without a bound, \(tally.unreadable) "
                + "unreadable; torn: \(tally.tornRecords) histogram records, \(tally.tornSlots) of \(tally.slots) "
                + "ring slots (" + String(format: "%.4f %%", tornRate * 100) + ")",
            pass: tally.undercounted == 0 && tally.overcounted == 0 && tally.ringMisses == 0
                && tally.orphansWithoutBound == 0 && tally.unreadable == 0 && tally.endToEndFailures == 0
                && tally.kills >= kills,
            notes: "seed \(seed); a torn record is one cut by the kill mid-write (at most one per thread); "
                + "ack order is end order only with one thread, so the timeline check runs on single-thread kills",
            counts: [
                "kills": Double(tally.kills), "acknowledged": Double(tally.acknowledged),
                "undercounted": Double(tally.undercounted), "overcounted": Double(tally.overcounted),
                "ringMisses": Double(tally.ringMisses), "orphansWithoutBound": Double(tally.orphansWithoutBound),
                "tornRecords": Double(tally.tornRecords), "tornSlots": Double(tally.tornSlots),
                "slots": Double(tally.slots), "endToEnd": Double(tally.endToEnd),
            ])
    }

    typealias Acknowledgement = SpanMemoryProtocol.Acknowledgement

    /// Recovers the killed session with a session store, as the next start does, and checks it.
    private static func check(directory: URL, threads: Int, acknowledged: [Acknowledgement], tally: inout Tally) {
        let store = SessionStore(directory: directory)
        guard let session = store.recoverPriorSessions().first, let memory = session.spanMemory else {
            tally.unreadable += 1
            return
        }
        let count = memory.histograms["mem.span"]?.count ?? 0
        if count < UInt64(acknowledged.count) { tally.undercounted += 1 }
        if count > UInt64(acknowledged.count + threads) { tally.overcounted += 1 }
        if threads == 1 {
            let inRing = Set(memory.spans.compactMap(\.budgetNanos))
            let newest = acknowledged.suffix(min(Int(count), ringCapacity - 16))
            if newest.contains(where: { !inRing.contains($0.budgetNanos) }) { tally.ringMisses += 1 }
        }
        let opened = session.orphanedSpans.first { $0.name == "child.open" }
        if let opened, memory.lastAliveWallNanos <= opened.startWallNanos { tally.orphansWithoutBound += 1 }
        if opened == nil { tally.orphansWithoutBound += 1 }
        tally.tornRecords += memory.tornRecords
        tally.tornSlots += memory.tornSlots
        tally.slots += memory.spans.count + memory.tornSlots
        try? store.acknowledge(session)
    }

    /// The public path: the next `Perf.install` writes the orphaned span with its bound and the
    /// crashed session's `recovered` payload, whose count covers every acknowledged span.
    private static func endToEnd(directory: URL, acknowledged: [Acknowledgement], tally: inout Tally) throws {
        tally.endToEnd += 1
        Perf.install(
            Perf.Configuration(directory: directory, app: Perf.AppInfo(name: "next-start"), recording: .enabled))
        Perf.shutdown()
        let events = try LedgerReader(directory: directory).readAll().events
        let orphan = events.first { $0.kind == .span && $0.exit == "orphaned" }
        let payloadPath = events.first { $0.kind == .diagnostic && $0.name == "recovered" }?.extra["path"]
        guard case .string(let relative)? = payloadPath,
            let bytes = FileManager.default.contents(atPath: directory.appendingPathComponent(relative).path),
            let snapshot = try? DiagnosticSnapshot(jsonBytes: Array(bytes)),
            (snapshot.spans["mem.span"]?.count ?? 0) >= UInt64(acknowledged.count),
            (orphan?.lowerMs ?? 0) > 0
        else {
            tally.endToEndFailures += 1
            return
        }
    }
}
