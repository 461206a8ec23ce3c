// The watchdog's thread: absolute-deadline sleeps on CLOCK_MONOTONIC, one detector tick per
// wake-up, pings to the target, then stack samples and reports.
import CPerfShims
import Glibc
import PerfCore
import Synchronization

/// The latest answered ping, written by the ping closure on the target.
final class PingBoard: Sendable {
    private let latest = Mutex<ServedPing?>(nil)

    func record(sequence: UInt64) {
        let served = ServedPing(sequence: sequence, servedNanos: perf_monotonic_ns(), tid: perf_gettid())
        latest.withLock { $0 = served }
    }

    var served: ServedPing? { latest.withLock { $0 } }
}

/// Everything the watchdog thread owns. Used by that thread only, after `spawn`.
final class WatchdogRunner: @unchecked Sendable {
    private let target: Perf.HangWatchdog.Target
    private let configuration: Perf.HangWatchdog.Configuration
    private let stopFlag: WatchdogFlag
    private let pausedFlag: WatchdogFlag
    private let statistics: WatchdogStatisticsBox
    private let board = PingBoard()
    /// `WATCHDOG=1` to systemd while the target answers, when the configuration links one.
    private var keepAlive: SystemdKeepAliveSender?

    init(
        target: Perf.HangWatchdog.Target, configuration: Perf.HangWatchdog.Configuration, stopFlag: WatchdogFlag,
        pausedFlag: WatchdogFlag, statistics: WatchdogStatisticsBox
    ) {
        self.target = target
        self.configuration = configuration
        self.stopFlag = stopFlag
        self.pausedFlag = pausedFlag
        self.statistics = statistics
        keepAlive = SystemdKeepAliveSender(configuration: configuration)
    }

    /// Starts the thread; `nil` if pthread_create failed.
    func spawn() -> pthread_t? { OwnThread.spawn { self.run() } }

    private func run() {
        perf_name_current_thread("perf-watchdog")
        _ = StackSampler.unavailableReason  // install the handler and prime backtrace() up front
        _ = QueueOwner.stateOffset  // find the drain lock's place before the first hang, not during it
        let interval = max(configuration.interval.watchdogNanos, 1_000_000)
        let clock = SystemClock()
        let start = perf_monotonic_ns()
        var detector = HangDetector(
            timing: HangTiming(configuration), startNanos: start, debuggerAttached: ProcProbe.debuggerAttached)
        var recorder = EpisodeRecorder(target: target, configuration: configuration, statistics: statistics)
        var deadline = start + interval
        while !stopFlag.value.load(ordering: .acquiring) {
            Self.sleep(until: deadline)
            if stopFlag.value.load(ordering: .acquiring) { break }
            let now = perf_monotonic_ns()
            let scheduled = deadline
            // Lateness is measured against `scheduled` (above) before the schedule re-synchronises.
            deadline += interval
            if deadline <= now { deadline = now + interval }
            let served = board.served
            let output = detector.tick(
                HangTick(
                    now: now, scheduled: scheduled, served: served, suspendedNanos: clock.suspendedNanos(),
                    wallNanos: clock.wallNanos(), paused: pausedFlag.value.load(ordering: .acquiring)))
            if let sequence = output.sendPing {
                let board = board
                target.enqueue { board.record(sequence: sequence) }
            }
            if let served { recorder.noteServed(by: served.tid) }
            statistics.recordTick(
                latenessNanos: now > scheduled ? now - scheduled : 0, cpuNanos: ProcProbe.threadCPUNanos(),
                pinged: output.sendPing != nil)
            recorder.handle(output, nowNanos: now)
            // After the episode is handled: a hang past the limit is journalled before silence.
            keepAlive?.tick(nowNanos: now, unansweredNanos: output.unansweredNanos)
        }
        // Stopped (or Perf shut down) during a hang: write it as in progress rather than drop it.
        let now = perf_monotonic_ns()
        if let flushed = detector.flush(now: now) { recorder.handle(flushed, nowNanos: now) }
    }

    private static func sleep(until deadline: UInt64) {
        var spec = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &spec, nil) == EINTR {}
    }
}
