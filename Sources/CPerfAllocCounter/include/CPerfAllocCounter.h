// Counts heap allocations per thread, for benchmarks and tests that prove a path allocates
// nothing. Linked only into perf-bench and the test bundles: it replaces malloc for the whole
// process it is linked into, so no library product may depend on it.
#ifndef CPERFALLOCCOUNTER_H
#define CPERFALLOCCOUNTER_H

#include <stdint.h>

/// malloc/calloc/realloc/aligned allocations made by the calling thread since it started.
uint64_t perf_thread_alloc_count(void);

/// Allocations made by every thread of the process.
uint64_t perf_process_alloc_count(void);

#endif
