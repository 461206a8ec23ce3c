// The semaphores of Perf's USDT probes (CPerfProbes.h): one `unsigned short` per probe in section
// `.probes`, named `<provider>_<probe>_semaphore`, as tracers expect. A tracer adds one to a
// probe's semaphore while it listens (the kernel does, for perf's and bpftrace's uprobes, through
// the uprobe's reference counter), and the probe sites fire only while it is non-zero.
#include "CPerfProbes.h"

#define PERF_PROBE_SEMAPHORE_DEFINE(probe) \
    __attribute__((section(".probes"), used)) volatile unsigned short perf_##probe##_semaphore = 0

PERF_PROBE_SEMAPHORE_DEFINE(span_end);
PERF_PROBE_SEMAPHORE_DEFINE(span_begin);
PERF_PROBE_SEMAPHORE_DEFINE(hang);
PERF_PROBE_SEMAPHORE_DEFINE(hitch);
PERF_PROBE_SEMAPHORE_DEFINE(note);
PERF_PROBE_SEMAPHORE_DEFINE(session_start);
PERF_PROBE_SEMAPHORE_DEFINE(session_end);
