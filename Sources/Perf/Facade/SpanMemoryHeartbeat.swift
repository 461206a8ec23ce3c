// The last moment a process was known alive, kept in its span memory once a second, so that the
// next start can say how long the spans a crash left open had been open at least.
import Dispatch
import PerfCore

/// A 1-second timer that stores the time in the span memory's header and re-dirties its resident
/// pages, so that a write fault armed by the kernel's writeback (every ~30 s per dirty page) is
/// usually taken on this thread rather than by a span's end. Never wakes a host thread: it runs on
/// a utility queue of its own, with a second of leeway.
final class SpanMemoryHeartbeat: @unchecked Sendable {
    // @unchecked: the source is only resumed in init and cancelled in stop; dispatch sources are
    // thread-safe for cancel.
    private let source: any DispatchSourceTimer

    init(memory: SpanMemory, clock: any PerfClock, intervalSeconds: Int = 1) {
        memory.heartbeat(monotonicNanos: clock.monotonicNanos(), wallNanos: clock.wallNanos())
        source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "perf.heartbeat", qos: .utility))
        source.schedule(
            deadline: .now() + .seconds(intervalSeconds), repeating: .seconds(intervalSeconds), leeway: .seconds(1))
        source.setEventHandler { [memory, clock] in
            memory.heartbeat(monotonicNanos: clock.monotonicNanos(), wallNanos: clock.wallNanos())
            memory.redirtyResidentPages()
        }
        source.resume()
    }

    func stop() { source.cancel() }

    deinit { source.cancel() }
}
