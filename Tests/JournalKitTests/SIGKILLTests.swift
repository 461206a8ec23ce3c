// SIGKILL durability with a real child process: every acknowledged entry must be recovered.
import Foundation
import PerfTestSupport
import Testing

@testable import JournalKit

@Suite struct SIGKILLTests {
    /// `perf-test-child`, a dependency of this target, built beside the test bundle.
    static let child = BuildProducts.testChild

    /// At least 25 kills per writer count (50 in all). Runs reopen the same journal in groups of
    /// ten (a fresh journal per group keeps each recovery small), so every run also starts its
    /// segment after whatever tail the previous kill left. About
    /// 1–8 % of kills tear the last entry (a kill must land inside a page-crossing copy of
    /// write(2)); the loop goes on, up to 100 kills, until it has seen a tear and checked that
    /// recovery dropped it. Tears cannot be forced from outside, so their absence is reported
    /// rather than failed; `RecoveryTests` proves tear handling at every byte offset, and
    /// `scripts/journal-kill.sh` counts tears over 1,000 kills.
    @Test(arguments: [1, 2])
    func everyAcknowledgedEntrySurvivesSIGKILL(threads: Int) throws {
        let base = try TemporaryDirectory("sigkill\(threads)")
        defer { base.remove() }
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        var acknowledged = Set<CrashPayload.ID>()
        var tornBefore = 0
        var tornTails = 0
        var kills = 0
        for kill in 0..<100 {
            if kill >= 25 && tornTails > 0 { break }
            kills += 1
            if kill % 10 == 0 {
                acknowledged.removeAll()
                tornBefore = 0
            }
            let directory = base.url.appendingPathComponent("group-\(kill / 10)")
            let runID = UInt32(kill)
            let target = 1 + Int(random.next() % 400)
            let acks = try CrashHarness.runAndKill(
                executable: Self.child,
                arguments: [
                    "journal-append", "run", directory.path, "\(threads)", "\(runID)", "\(random.next())",
                ],
                acknowledgementsBeforeKill: target)
            #expect(acks.count >= target, "seed \(seed)")
            for ack in acks { acknowledged.insert(CrashPayload.ID(runID: runID, thread: ack.thread, index: ack.index)) }

            let recovery = try Journal.recover(directory: directory)
            let recovered = recovery.entries.compactMap(CrashPayload.verify)
            #expect(recovered.count == recovery.entries.count, "a damaged entry was returned (seed \(seed))")
            #expect(Set(recovered).count == recovered.count, "an entry was returned twice (seed \(seed))")
            let lost = acknowledged.subtracting(recovered)
            #expect(lost.isEmpty, "kill \(kill): \(lost.count) acknowledged entries lost (seed \(seed))")
            #expect(recovery.headers.count == kill % 10 + 1, "seed \(seed)")
            if recovery.tornSegmentCount > tornBefore {
                // A tear: recovery dropped the partial frame and kept everything before it.
                tornTails += recovery.tornSegmentCount - tornBefore
                #expect(recovery.tornTail && recovery.bytesDiscarded > 0)
                tornBefore = recovery.tornSegmentCount
            }
            if !lost.isEmpty { return }
        }
        print(
            "SIGKILL test (\(threads) writer threads): \(kills) kills, \(acknowledged.count) acknowledged, 0 lost, "
                + "\(tornTails) torn tails observed and dropped (seed \(seed))")
    }
}
