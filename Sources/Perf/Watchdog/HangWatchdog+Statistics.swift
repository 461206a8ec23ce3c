// What a watchdog costs and what it saw, so its own overhead can be checked in production.
import Synchronization

extension Perf.HangWatchdog {
    /// Counters about one watchdog.
    public struct Statistics: Sendable, Equatable {
        /// Wake-ups of the watchdog thread.
        public var ticks: UInt64 = 0
        /// Pings sent to the target.
        public var pingsSent: UInt64 = 0
        /// CPU time used by the watchdog thread (CLOCK_THREAD_CPUTIME_ID).
        public var cpuNanos: UInt64 = 0
        /// 99th percentile of how late the watchdog thread woke, over its last 1024 wake-ups.
        public var tickLatenessP99Nanos: UInt64 = 0
        /// The latest wake-up recorded.
        public var maxTickLatenessNanos: UInt64 = 0
        /// Finished hitches, suppressed ones included.
        public var hitches: UInt64 = 0
        /// Finished hangs, suppressed ones included.
        public var hangs: UInt64 = 0
        /// Episodes not blamed on the target (stopped, debugger, suspend, starved).
        public var suppressed: UInt64 = 0
        /// Stack samples taken successfully.
        public var samplesTaken: UInt64 = 0
        /// Stack samples that failed (thread gone, signal not answered, sampler unavailable).
        public var sampleFailures: UInt64 = 0
        /// SIGPROF signals sent to take samples: only to threads that were running, never to one
        /// blocked in a system call.
        public var signalsSent: UInt64 = 0
        /// Samples of blocked threads read from `/proc` and their stack memory, without a signal.
        public var samplesWithoutSignal: UInt64 = 0
        /// Wall time spent taking samples (unwinding, or signal, handler and copy).
        public var sampleNanos: UInt64 = 0
        /// Wall time spent symbolicating, demangling and describing waits.
        public var symbolicationNanos: UInt64 = 0
    }
}

/// The watchdog thread writes, `statistics` reads: a lock held for a few stores per tick.
final class WatchdogStatisticsBox: Sendable {
    private struct State {
        var statistics = Perf.HangWatchdog.Statistics()
        var lateness = [UInt64](repeating: 0, count: 1024)
        var next = 0
        var filled = 0
    }

    private let state = Mutex(State())

    func recordTick(latenessNanos: UInt64, cpuNanos: UInt64, pinged: Bool) {
        state.withLock {
            $0.statistics.ticks += 1
            $0.statistics.cpuNanos = cpuNanos
            if pinged { $0.statistics.pingsSent += 1 }
            $0.statistics.maxTickLatenessNanos = max($0.statistics.maxTickLatenessNanos, latenessNanos)
            $0.lateness[$0.next] = latenessNanos
            $0.next = ($0.next + 1) % $0.lateness.count
            $0.filled = min($0.filled + 1, $0.lateness.count)
        }
    }

    func update(_ body: (inout Perf.HangWatchdog.Statistics) -> Void) {
        state.withLock { body(&$0.statistics) }
    }

    var snapshot: Perf.HangWatchdog.Statistics {
        let (statistics, recent) = state.withLock { ($0.statistics, Array($0.lateness.prefix($0.filled))) }
        var result = statistics
        let sorted = recent.sorted()
        if !sorted.isEmpty { result.tickLatenessP99Nanos = sorted[min(sorted.count - 1, sorted.count * 99 / 100)] }
        return result
    }
}
