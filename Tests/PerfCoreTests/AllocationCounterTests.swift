// The allocation counter that benchmarks and tests rely on to prove a path allocates nothing.
import CPerfAllocCounter
import Testing

@Suite struct AllocationCounterTests {
    @Test(.countsAllocations) func countsThisThreadsAllocations() {
        let before = perf_thread_alloc_count()
        var arrays: [[Int]] = []
        for index in 0..<100 { arrays.append([index, index + 1]) }
        let made = perf_thread_alloc_count() - before
        #expect(arrays.count == 100)
        #expect(made >= 100)
        #expect(perf_process_alloc_count() >= made)
    }

    @Test(.countsAllocations) func arithmeticAllocatesNothing() {
        var sum = 0
        let before = perf_thread_alloc_count()
        for index in 0..<10_000 { sum &+= index &* 3 }
        #expect(perf_thread_alloc_count() - before == 0)
        #expect(sum == 149_985_000)
    }
}
