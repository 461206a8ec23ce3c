// A deterministic model of a watchdog and its target for the detector tests: the watchdog wakes
// on an absolute 50 ms schedule unless the process is stopped; a ping is served once the queue has
// finished its blocks and given the ping `loadMs` of running time. No real time passes.
@testable import Perf

/// A half-open interval of simulated milliseconds.
struct SimInterval {
    var start: UInt64
    var end: UInt64
    func contains(_ t: UInt64) -> Bool { t >= start && t < end }
}

/// Whether a debugger is attached, as the simulated process would answer.
final class SimDebugger: @unchecked Sendable {
    var attached = false
}

struct WatchdogSimulation {
    var configuration = Perf.HangWatchdog.Configuration()
    /// Periods during which the queue runs a blocking item (wall time, stops included).
    var blocks: [SimInterval] = []
    /// Periods during which the whole process is stopped (SIGSTOP, debugger breakpoint).
    var stops: [SimInterval] = []
    /// Running time a ping waits behind other queued work: a loaded queue.
    var loadMs: UInt64 = 0
    /// Pause windows (watchdog paused).
    var pauses: [SimInterval] = []
    /// Host suspends (CLOCK_BOOTTIME − CLOCK_MONOTONIC grows by their length at their end).
    var suspends: [SimInterval] = []
    var debugger = SimDebugger()
    /// When set, the debugger is attached exactly during these periods (else `debugger.attached`).
    var debuggerAttachedDuring: [SimInterval] = []

    /// Everything the detector asked for during the run.
    struct Result {
        var ended: [HangDetection] = []
        var ongoing: [HangDetection] = []
        var fatal: [HangDetection] = []
        var samples: [(atMs: UInt64, episode: UInt64)] = []
        var pings = 0
    }

    private static let ms: UInt64 = 1_000_000

    /// Runs the model from 0 to `untilMs` (the watchdog starts at 0).
    func run(untilMs: UInt64) -> Result {
        var configuration = configuration
        configuration.startupGrace = .zero
        var ids: UInt64 = 0
        let debugger = debugger
        var detector = HangDetector(
            timing: HangTiming(configuration), startNanos: 0, debuggerAttached: { debugger.attached },
            makeID: {
                ids += 1
                return ids
            })
        let interval = configuration.interval.watchdogNanos / Self.ms
        var result = Result()
        var scheduled = interval
        var pending: (sequence: UInt64, servedAt: UInt64)?
        var lastServed: ServedPing?
        while scheduled <= untilMs {
            let wake = wakeTime(scheduled)
            if let ping = pending, ping.servedAt <= wake {
                lastServed = ServedPing(sequence: ping.sequence, servedNanos: ping.servedAt * Self.ms, tid: 7)
                pending = nil
            }
            if !debuggerAttachedDuring.isEmpty {
                debugger.attached = debuggerAttachedDuring.contains { $0.contains(wake) }
            }
            let output = detector.tick(
                HangTick(
                    now: wake * Self.ms, scheduled: scheduled * Self.ms, served: lastServed,
                    suspendedNanos: suspended(at: wake) * Self.ms, wallNanos: wake * Self.ms,
                    paused: pauses.contains { $0.contains(wake) }))
            if let sequence = output.sendPing {
                pending = (sequence, serveTime(sentAt: wake))
                result.pings += 1
            }
            if let id = output.sampleEpisode { result.samples.append((wake, id)) }
            if let ongoing = output.ongoing { result.ongoing.append(ongoing) }
            if let fatal = output.fatal { result.fatal.append(fatal) }
            result.ended += output.ended
            // Re-synchronise only after the lateness was measured against `scheduled`.
            scheduled += interval
            if scheduled <= wake { scheduled = wake + interval }
        }
        return result
    }

    private func wakeTime(_ scheduled: UInt64) -> UInt64 {
        var t = scheduled
        while let stop = stops.first(where: { $0.contains(t) }) { t = stop.end }
        return t
    }

    private func suspended(at t: UInt64) -> UInt64 {
        suspends.filter { $0.end <= t }.reduce(0) { $0 + $1.end - $1.start }
    }

    private func serveTime(sentAt: UInt64) -> UInt64 {
        var t = sentAt
        var remaining = loadMs
        while true {
            if stops.contains(where: { $0.contains(t) }) || blocks.contains(where: { $0.contains(t) }) {
                t += 1
                continue
            }
            if remaining == 0 { return t }
            remaining -= 1
            t += 1
        }
    }
}
