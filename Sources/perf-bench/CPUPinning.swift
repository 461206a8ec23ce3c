// Pinning a benchmark thread to one CPU, for the rows that compare two threads with one: each
// thread is then compared with itself on the same CPU (see SpanContentionBenchmarks.scaling).
import CPerfAllocCounter
import Foundation

enum CPUPinning {
    /// Whether threads may run pinned on CPU 0 and on CPU 1: both in the affinity mask this
    /// process started with (a container's cpuset may leave out either).
    static var available: Bool { unavailableReason.isEmpty }

    /// Why pinning is not used, or "" when it is.
    static let unavailableReason: String = {
        var error: Int32 = 0
        if perf_bench_cpus_0_and_1_usable(&error) == 1 { return "" }
        return error == 0 ? "CPUs 0 and 1 not both in the affinity mask" : "sched_getaffinity failed, errno \(error)"
    }()

    /// Pins the calling thread to `cpu`; call only when ``available``. A failure leaves the
    /// thread where it was and is said on stderr, since the row's note would then be wrong.
    static func pin(to cpu: Int) {
        let error = perf_bench_pin_thread(Int32(cpu))
        if error != 0 {
            FileHandle.standardError.write(
                Data("perf-bench: pinning a thread to CPU \(cpu) failed, errno \(error)\n".utf8))
        }
    }
}
