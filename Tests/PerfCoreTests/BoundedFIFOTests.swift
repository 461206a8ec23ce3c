// The sink queues' ring: FIFO order against an array model under seeded operations, its bound,
// storage that grows only with depth (never past the bound), and every element released.
import PerfTestSupport
import Synchronization
import Testing

@testable import PerfCore

@Suite struct BoundedFIFOTests {
    /// Seeded appends and removals against an array: the same answers, the same order, the same
    /// refusals at the bound, and slots that only follow the deepest the queue has been.
    @Test(arguments: [0xF1F0_0001, 0xF1F0_0002, 0xF1F0_0003, 0xF1F0_0004, 0xF1F0_0005] as [UInt64])
    func behavesAsABoundedArray(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let capacity = Int.random(in: 1...300, using: &random)
        let fifo = BoundedFIFO<Int>(capacity: capacity)
        var model: [Int] = []
        var deepest = 0
        var next = 0
        for _ in 0..<20_000 {
            // Phases that lean towards filling, then towards draining, so the ring wraps at every depth.
            let appendBias = (next / 500) % 2 == 0 ? 0.7 : 0.3
            if Double.random(in: 0..<1, using: &random) < appendBias {
                let accepted = fifo.append(next)
                #expect(accepted == (model.count < capacity), "seed \(seed)")
                if accepted { model.append(next) }
                next += 1
            } else {
                let removed = fifo.removeFirst()
                #expect(removed == model.first, "seed \(seed)")
                if !model.isEmpty { model.removeFirst() }
            }
            deepest = max(deepest, model.count)
            #expect(fifo.count == model.count)
            #expect(fifo.first == model.first)
        }
        #expect(deepest == capacity, "seed \(seed): the run never filled the queue")
        // Slots grow by doubling from 16 only when full, and stop at the bound.
        var expected = 0
        while expected < deepest { expected = min(capacity, max(BoundedFIFO<Int>.initialSlots, expected * 2)) }
        #expect(fifo.allocated == expected)
    }

    /// A queue that never holds more than a few elements keeps its first allocation, however many
    /// pass through it.
    @Test func aShallowQueueStaysSmall() {
        let fifo = BoundedFIFO<Int>(capacity: 4_096)
        for index in 0..<100_000 {
            #expect(fifo.append(index))
            if index % 3 == 2 {
                for _ in 0..<3 { _ = fifo.removeFirst() }
            }
        }
        #expect(fifo.allocated == BoundedFIFO<Int>.initialSlots)
        #expect(fifo.count == 1)
    }

    /// Elements removed, and elements still queued when the queue goes, are each released once.
    @Test func everyElementIsReleasedOnce() {
        let released = Counter()
        do {
            let fifo = BoundedFIFO<Tracked>(capacity: 40)
            for _ in 0..<40 { #expect(fifo.append(Tracked(released))) }
            #expect(!fifo.append(Tracked(released)))  // refused: released at once
            for _ in 0..<25 { _ = fifo.removeFirst() }
            for _ in 0..<10 { #expect(fifo.append(Tracked(released))) }  // wraps
            #expect(released.value.load(ordering: .relaxed) == 26)
            #expect(fifo.count == 25)
        }
        #expect(released.value.load(ordering: .relaxed) == 51)
    }

    private final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    private final class Tracked {
        let counter: Counter
        init(_ counter: Counter) { self.counter = counter }
        deinit { counter.value.add(1, ordering: .relaxed) }
    }
}
