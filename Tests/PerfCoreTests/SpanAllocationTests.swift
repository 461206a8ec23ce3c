// The under-budget scoped hot path allocates nothing; the slow path is seen allocating, which
// proves the counter is watching.
import CPerfAllocCounter
import Testing

@testable import PerfCore

@Suite struct SpanAllocationTests {
    @Test(.countsAllocations) func underBudgetBeginEndAllocatesNothing() {
        let recorder = SpanRecorder(histograms: HistogramRegistry(), pipeline: RecordPipeline())
        let site = CallSite()
        recorder.end(recorder.begin("alloc.span", budgetNanos: 1_000_000_000, site: site))  // warm-up
        let before = perf_thread_alloc_count()
        for _ in 0..<10_000 {
            recorder.end(recorder.begin("alloc.span", budgetNanos: 1_000_000_000, site: site))
        }
        #expect(perf_thread_alloc_count() - before == 0, "allocations over 10,000 under-budget begin+end pairs")
    }

    @Test(.countsAllocations) func overBudgetEndIsSeenAllocating() {
        let pipeline = RecordPipeline()
        pipeline.addSink(InMemoryRecordSink(limit: 16), mode: .inline)
        let recorder = SpanRecorder(histograms: HistogramRegistry(), pipeline: pipeline)
        let site = CallSite()
        let before = perf_thread_alloc_count()
        recorder.end(recorder.begin("alloc.slow", budgetNanos: nil, site: site))
        #expect(perf_thread_alloc_count() - before > 0)
    }
}
