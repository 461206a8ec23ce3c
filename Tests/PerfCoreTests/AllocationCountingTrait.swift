// Allocation-counting tests run only where CPerfAllocCounter owns malloc: under a sanitizer its
// runtime does, the counts stay 0, and such a test reports skipped instead of a false pass.
import CPerfAllocCounter
import Testing

extension Trait where Self == ConditionTrait {
    static var countsAllocations: Self {
        .enabled(
            if: perf_alloc_counter_available() != 0,
            "allocations are not counted in a sanitizer build (the sanitizer's runtime owns malloc)")
    }
}

/// Whether this is an uninstrumented build: under a sanitizer, whose runtime owns malloc (how a
/// test can tell), every load and store is instrumented and a timing bound means nothing.
let uninstrumentedBuild = perf_alloc_counter_available() != 0
