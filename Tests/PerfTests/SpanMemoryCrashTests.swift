// A child whose span histograms and flight recorder live in span memory, SIGKILLed at a random
// moment a hundred times: the next start recovers every acknowledged span, the newest of them in
// its timeline, and a non-zero lower bound for the span it left open.
import Foundation
import Glibc
import PerfCore
import PerfTestSupport
import Testing

@testable import Perf

@Suite struct SpanMemoryCrashTests {
    typealias Acknowledgement = SpanMemoryProtocol.Acknowledgement

    /// Starts the child, reads `acknowledgements` lines, SIGKILLs it and returns every line it
    /// printed, in the order printed.
    static func killChild(directory: URL, threads: Int, after acknowledgements: Int) throws -> [Acknowledgement] {
        let child = try ChildProcess(
            executable: BuildProducts.testChild, arguments: ["span-memory", directory.path, "\(threads)"])
        var lines: [String] = []
        while lines.count < acknowledgements, let line = child.readLine(timeoutSeconds: 60) { lines.append(line) }
        child.killAndWait()
        #expect(ChildProcess.terminatingSignal(child.wait()) == SIGKILL)
        return (lines + child.readRemainingLines()).compactMap(Acknowledgement.init)
    }

    @Test func everyAcknowledgedSpanSurvivesARandomSIGKILL() throws {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        var tornRecords = 0
        var tornSlots = 0
        var runs = 0
        for run in 0..<100 {
            let directory = try TemporaryDirectory("span-memory-kill")
            defer { directory.remove() }
            let threads = Int(random.next() % 3) + 1
            let acknowledged = try Self.killChild(
                directory: directory.url, threads: threads, after: Int(random.next() % 8_000) + 1)
            let context = "seed \(seed), run \(run), \(threads) threads, \(acknowledged.count) acknowledged"
            try #require(!acknowledged.isEmpty, "\(context)")

            let store = SessionStore(directory: directory.url)
            let recovered = store.recoverPriorSessions()
            try #require(recovered.count == 1, "\(context)")
            let session = recovered[0]
            #expect(session.status == .crashed, "\(context)")
            let memory = try #require(session.spanMemory, "\(context): \(session.spanMemoryProblem ?? "no file")")

            // Exact counts: at least every acknowledged span, at most those begun (one per thread
            // may have ended unacknowledged).
            let count = memory.histograms["mem.span"]?.count ?? 0
            #expect(count >= UInt64(acknowledged.count), "\(context): \(count) recovered")
            #expect(count <= UInt64(acknowledged.count + threads), "\(context): \(count) recovered")
            #expect(memory.tornRecords <= threads, "\(context)")
            #expect(!memory.closedCleanly)

            // The timeline holds the newest spans. With one thread, ack order is end order: the
            // newest acknowledged spans up to the ring's size, less one block of 16 tickets, are
            // all there. With several, a thread may be preempted between a span's end and its
            // acknowledgement, so ack order is not end order; every entry must still be one of
            // the child's spans (acknowledged, or the one in flight), each at most once.
            let ringSpans = memory.spans.filter { $0.name == "mem.span" }
            let inRing = Set(ringSpans.compactMap(\.budgetNanos))
            #expect(inRing.count == ringSpans.count, "\(context): a span twice in the ring")
            if threads == 1 {
                let newest = acknowledged.suffix(min(Int(count), SpanMemoryChild.ringCapacity - 16))
                let missing = newest.filter { !inRing.contains($0.budgetNanos) }
                #expect(missing.isEmpty, "\(context): \(missing.prefix(8)) not in the ring of \(memory.spans.count)")
            }
            var last: [Int: Int] = [:]
            for acknowledgement in acknowledged { last[acknowledgement.thread] = acknowledgement.index }
            let foreign = ringSpans.filter { span in
                guard let budget = span.budgetNanos, budget >= 1_000_000_000_000 else { return true }
                let code = Int(budget / 1_000_000) - 1_000_000
                return code / 100_000 >= threads || code % 100_000 > (last[code / 100_000] ?? -1) + 1
            }
            #expect(foreign.isEmpty, "\(context): \(foreign.prefix(4)) is no span the child acknowledged")

            // Every slot holds a span but those whose ticket a thread took without using it (the
            // rest of a block; in the first lap they are still empty), those cut by the kill, and
            // the span a thread had ticked in its histogram but not yet in the ring.
            let expected = min(Int(count), SpanMemoryChild.ringCapacity)
            #expect(memory.spans.count <= expected, "\(context)")
            // A thread that renews a stale block (after idling past a quarter lap) leaves the rest of
            // the old one unused too, so holes are not bounded by one block a thread: allow a tenth.
            #expect(memory.spans.count >= expected * 9 / 10 - memory.tornSlots, "\(context)")

            // The span left open is orphaned with how long it was open at least.
            let lines = RecoveryLines.events(for: session)
            let orphan = try #require(lines.first { $0.exit == "orphaned" }, "\(context)")
            #expect(orphan.name == "child.open")
            #expect((orphan.lowerMs ?? 0) > 0, "\(context): \(orphan)")
            #expect(orphan.durationMs == orphan.lowerMs)

            // What the report will read: the recovered payload carries the same figures.
            let snapshot = try #require(RecoveredDiagnostics.snapshot(for: session), "\(context)")
            #expect(snapshot.reason == "recovered")
            #expect(snapshot.spans["mem.span"]?.count == count, "\(context)")
            #expect(snapshot.intervals?.spans.count == memory.spans.count, "\(context)")
            try store.acknowledge(session)
            tornRecords += memory.tornRecords
            tornSlots += memory.tornSlots
            runs += 1
        }
        #expect(runs == 100)
        // At most one record per killed thread can be cut mid-write.
        #expect(tornRecords <= 300 && tornSlots <= 300, "seed \(seed): \(tornRecords) torn records, \(tornSlots) slots")
    }
}

/// The child's constants (the child is an executable target tests cannot import; the values live
/// in PerfTestSupport, which it shares).
typealias SpanMemoryChild = SpanMemoryProtocol
