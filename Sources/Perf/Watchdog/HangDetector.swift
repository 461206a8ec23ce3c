// The watchdog's detection logic as a pure state machine: fed one tick at a time with the time,
// the wake-up it was scheduled for and the latest answered ping, it says when to ping, when to
// sample stacks and which episodes are in progress or over. Tests drive it without sleeping.

/// Thresholds in nanoseconds, taken from a ``Perf/HangWatchdog/Configuration``.
struct HangTiming: Sendable {
    var hitchNanos: UInt64
    var hangNanos: UInt64
    var graceNanos: UInt64
    var firstSampleNanos: UInt64
    var sampleIntervalNanos: UInt64
    var maxSamples: Int
    var ongoingNanos: UInt64
    var fatalNanos: UInt64?
    var suppressWhenDebugging: Bool

    init(_ configuration: Perf.HangWatchdog.Configuration) {
        hitchNanos = configuration.hitchThreshold.watchdogNanos
        hangNanos = configuration.hangThreshold.watchdogNanos
        graceNanos = configuration.startupGrace.watchdogNanos
        firstSampleNanos = configuration.firstSampleAfter.watchdogNanos
        sampleIntervalNanos = configuration.sampleInterval.watchdogNanos
        maxSamples = configuration.maxSamples
        ongoingNanos = configuration.ongoingAfter.watchdogNanos
        fatalNanos = configuration.fatalAfter?.watchdogNanos
        suppressWhenDebugging = configuration.suppressWhenDebugging
    }
}

/// One answered ping, as the ping closure recorded it on the target.
struct ServedPing: Sendable, Equatable {
    var sequence: UInt64
    var servedNanos: UInt64
    var tid: Int32
}

/// What the detector learns at one wake-up of the watchdog thread.
struct HangTick {
    /// CLOCK_MONOTONIC when the watchdog woke.
    var now: UInt64
    /// The wake time it was sleeping toward (before any re-synchronisation of the schedule).
    var scheduled: UInt64
    /// The most recently answered ping, if any.
    var served: ServedPing?
    /// CLOCK_BOOTTIME − CLOCK_MONOTONIC now.
    var suspendedNanos: UInt64 = 0
    /// Wall-clock nanoseconds now.
    var wallNanos: UInt64 = 0
    /// The watchdog is paused.
    var paused: Bool = false
}

/// An episode as the detector sees it: timing only, no stacks.
struct HangDetection: Sendable, Equatable {
    var id: UInt64
    var kind: Perf.HangWatchdog.Episode.Kind
    /// Ping sent → answered, as observed (any stall of the watchdog included).
    var lowerNanos: UInt64
    /// Last answer before → answered, as observed.
    var upperNanos: UInt64
    /// Midpoint of the bounds, each with the watchdog's stall inside it removed: what decides.
    var durationNanos: UInt64
    var stallNanos: UInt64
    var suppressed: Perf.HangWatchdog.Episode.SuppressionReason?
    var fatal: Bool
    var inProgress: Bool
    var servingTid: Int32?
    var samplesTaken: Int
    var startedWallNanos: UInt64
}

/// The detector's instructions for one tick.
struct HangTickOutput {
    /// Send a ping carrying this sequence number now.
    var sendPing: UInt64?
    /// Sample the blocked thread's stack now, for the episode with this id.
    var sampleEpisode: UInt64?
    /// Report this hang as in progress.
    var ongoing: HangDetection?
    /// The hang reached `fatalAfter`.
    var fatal: HangDetection?
    /// Episodes that are over (at most two: one merged episode and one suppressed ping).
    var ended: [HangDetection] = []
    /// The episode with this id was abandoned (it turned out fast, or the watchdog paused):
    /// drop its stack samples.
    var discarded: UInt64?
    /// How long the outstanding ping has gone unanswered, the watchdog's own stalls removed and
    /// counted from the end of the start-up grace at the earliest; 0 while paused or answered.
    var unansweredNanos: UInt64 = 0
}

struct HangDetector {
    private struct Ping {
        var sequence: UInt64
        var sentNanos: UInt64
        /// When the target was last known responsive: the previous answer (or the send time).
        var upperStartNanos: UInt64
        var wallAtSend: UInt64
    }

    private struct OpenEpisode {
        var id: UInt64
        var firstSentNanos: UInt64
        var upperStartNanos: UInt64
        /// `nil` while its first ping is unanswered; then the latest merged answer.
        var lastServedNanos: UInt64?
        var servingTid: Int32?
        var samplesTaken = 0
        var ongoingReported = false
        /// Elapsed time at which the in-progress report is due again.
        var nextOngoingNanos: UInt64 = 0
        var fatalReported = false
        var startedWallNanos: UInt64
        /// A debugger was attached at one of the episode's checks (its opening, a stack sample):
        /// one attached during the hang and detached before its end still counts.
        var debuggerSeen = false
    }

    private let timing: HangTiming
    private let graceEndNanos: UInt64
    private let debuggerAttached: () -> Bool
    private let makeID: () -> UInt64
    private var nextSequence: UInt64 = 1
    private var outstanding: Ping?
    private var lastServedNanos: UInt64?
    private var previousSuspendedNanos: UInt64?
    private var episode: OpenEpisode?
    private var stalls = StallLog()

    /// - Parameters:
    ///   - startNanos: monotonic time of `start()`; the grace period runs from here.
    ///   - debuggerAttached: asked when an episode opens, at each of its stack samples and when
    ///     it ends (a few reads of `/proc/self/status` per episode, none between episodes).
    init(
        timing: HangTiming, startNanos: UInt64, debuggerAttached: @escaping () -> Bool,
        makeID: @escaping () -> UInt64 = HangReporting.makeEpisodeID
    ) {
        self.timing = timing
        self.graceEndNanos = startNanos + timing.graceNanos
        self.debuggerAttached = debuggerAttached
        self.makeID = makeID
    }

    mutating func tick(_ tick: HangTick) -> HangTickOutput {
        var output = HangTickOutput()
        let suspendGrowth =
            tick.suspendedNanos - min(tick.suspendedNanos, previousSuspendedNanos ?? tick.suspendedNanos)
        previousSuspendedNanos = tick.suspendedNanos
        stalls.record(scheduled: tick.scheduled, actual: tick.now, suspendedNanos: suspendGrowth)
        if tick.paused {
            // A hang already under way when the pause came is written, not dropped.
            if let flushed = flush(now: tick.now) {
                output = flushed
            } else {
                output.discarded = episode?.id
            }
            outstanding = nil
            episode = nil
            lastServedNanos = nil
            stalls.removeAll()
            return output
        }
        if let ping = outstanding, let served = tick.served, served.sequence == ping.sequence {
            outstanding = nil
            answered(ping, served, &output)
            lastServedNanos = served.servedNanos
        }
        if let ping = outstanding {
            progress(ping, tick, &output)
            let from = max(ping.sentNanos, graceEndNanos)
            if tick.now > from {
                let span = tick.now - from
                output.unansweredNanos = span - min(span, stalls.overlap(from: from, to: tick.now))
            }
        } else {
            let sequence = nextSequence
            nextSequence += 1
            outstanding = Ping(
                sequence: sequence, sentNanos: tick.now, upperStartNanos: lastServedNanos ?? tick.now,
                wallAtSend: tick.wallNanos)
            output.sendPing = sequence
        }
        return output
    }

    /// A ping came back: open, extend (backlog) or close an episode.
    private mutating func answered(_ ping: Ping, _ served: ServedPing, _ output: inout HangTickOutput) {
        let at = max(served.servedNanos, ping.sentNanos)
        let lower = at - ping.sentNanos
        let upper = at - ping.upperStartNanos
        let rawMidpoint = (lower + upper) / 2
        let adjustedMidpoint =
            (lower - stalls.overlap(from: ping.sentNanos, to: at) + upper
                - stalls.overlap(from: ping.upperStartNanos, to: at)) / 2
        let slow = adjustedMidpoint >= timing.hitchNanos
        if var open = episode, open.lastServedNanos != nil {
            if slow {
                open.lastServedNanos = at
                episode = open
                return
            }
            episode = nil
            if let ended = finish(open) { output.ended.append(ended) }
        }
        guard slow || rawMidpoint >= timing.hitchNanos else {
            output.discarded = episode?.id
            episode = nil
            return
        }
        var open = episode ?? openEpisode(for: ping)
        open.lastServedNanos = at
        open.servingTid = served.tid
        if slow {
            episode = open
        } else {
            episode = nil
            if let ended = finish(open) { output.ended.append(ended) }
        }
    }

    /// A ping is still unanswered: sample, report in progress, fire `fatalAfter`.
    private mutating func progress(_ ping: Ping, _ tick: HangTick, _ output: inout HangTickOutput) {
        let origin = episode?.firstSentNanos ?? ping.sentNanos
        guard origin >= graceEndNanos, tick.now > origin else { return }
        let elapsed = (tick.now - origin) - stalls.overlap(from: origin, to: tick.now)
        if episode == nil {
            guard elapsed >= timing.firstSampleNanos else { return }
            episode = openEpisode(for: ping)
        }
        guard var open = episode else { return }
        let due = timing.firstSampleNanos + UInt64(open.samplesTaken) * timing.sampleIntervalNanos
        if open.samplesTaken < timing.maxSamples, elapsed >= due {
            open.samplesTaken += 1
            output.sampleEpisode = open.id
            if timing.suppressWhenDebugging, !open.debuggerSeen { open.debuggerSeen = debuggerAttached() }
        }
        let upperStall = stalls.overlap(from: open.upperStartNanos, to: tick.now)
        let upper = (tick.now - open.upperStartNanos) - upperStall
        let snapshot = HangDetection(
            id: open.id, kind: .hang, lowerNanos: tick.now - origin, upperNanos: tick.now - open.upperStartNanos,
            durationNanos: (elapsed + max(upper, elapsed)) / 2, stallNanos: upperStall, suppressed: nil, fatal: false,
            inProgress: true, servingTid: nil, samplesTaken: open.samplesTaken,
            startedWallNanos: open.startedWallNanos)
        // The in-progress marker is kept current while the hang lasts (every tick, or every 5 % of
        // its length once that is longer), so a kill leaves a fatal hang whose duration is within
        // a tick and 5 % of how long it had really lasted.
        if elapsed >= timing.ongoingNanos,
            !open.ongoingReported || output.sampleEpisode != nil || elapsed >= open.nextOngoingNanos
        {
            open.ongoingReported = true
            // Half a refresh early: ticks jitter, and a due time just missed would skip one.
            open.nextOngoingNanos = elapsed + max(Self.ongoingRefreshNanos, elapsed / 20) - Self.ongoingRefreshNanos / 2
            output.ongoing = snapshot
        }
        if let fatalNanos = timing.fatalNanos, elapsed >= fatalNanos, !open.fatalReported {
            open.fatalReported = true
            var fatal = snapshot
            fatal.fatal = true
            output.fatal = fatal
        }
        episode = open
    }

    /// Shortest time between two in-progress reports of one hang (one report per tick at the
    /// default 50 ms interval).
    static let ongoingRefreshNanos: UInt64 = 50_000_000

    /// The stall under way at `now`, for a watchdog that stops or pauses during it: the episode,
    /// marked in progress with its lower bound as duration, plus one last stack sample. `nil`
    /// when nothing has been late past the hitch threshold. Forgets the outstanding ping.
    mutating func flush(now: UInt64) -> HangTickOutput? {
        defer {
            outstanding = nil
            episode = nil
        }
        guard let ping = outstanding else { return nil }
        let origin = episode?.firstSentNanos ?? ping.sentNanos
        guard origin >= graceEndNanos, now > origin else { return nil }
        let stall = stalls.overlap(from: origin, to: now)
        let elapsed = (now - origin) - stall
        guard elapsed >= timing.hitchNanos else { return nil }
        let upperStart = episode?.upperStartNanos ?? ping.upperStartNanos
        let id = episode?.id ?? makeID()
        var output = HangTickOutput()
        output.sampleEpisode = id
        output.ended = [
            HangDetection(
                id: id, kind: elapsed >= timing.hangNanos ? .hang : .hitch, lowerNanos: now - origin,
                upperNanos: now - upperStart, durationNanos: elapsed,
                stallNanos: stalls.overlap(from: upperStart, to: now), suppressed: nil,
                fatal: episode?.fatalReported ?? false, inProgress: true, servingTid: nil,
                samplesTaken: (episode?.samplesTaken ?? 0) + 1,
                startedWallNanos: episode?.startedWallNanos ?? ping.wallAtSend)
        ]
        return output
    }

    /// A new episode for the late `ping`, noting whether a debugger is attached as it opens.
    private mutating func openEpisode(for ping: Ping) -> OpenEpisode {
        var open = OpenEpisode(
            id: makeID(), firstSentNanos: ping.sentNanos, upperStartNanos: ping.upperStartNanos,
            startedWallNanos: ping.wallAtSend)
        if timing.suppressWhenDebugging { open.debuggerSeen = debuggerAttached() }
        return open
    }

    /// Closes an episode; `nil` when it began inside the start-up grace period.
    private func finish(_ open: OpenEpisode) -> HangDetection? {
        guard open.firstSentNanos >= graceEndNanos, let last = open.lastServedNanos else { return nil }
        let lowerStall = stalls.overlap(from: open.firstSentNanos, to: last)
        let upperStall = stalls.overlap(from: open.upperStartNanos, to: last)
        let lower = (last - open.firstSentNanos) - lowerStall
        let upper = (last - open.upperStartNanos) - upperStall
        let adjusted = (lower + upper) / 2
        let raw = (last - open.firstSentNanos + last - open.upperStartNanos) / 2
        let judged = adjusted >= timing.hitchNanos ? adjusted : raw
        var reason: Perf.HangWatchdog.Episode.SuppressionReason?
        if timing.suppressWhenDebugging, open.debuggerSeen || debuggerAttached() {
            reason = .debugger
        } else if adjusted < timing.hitchNanos {
            if stalls.suspended(from: open.upperStartNanos, to: last) >= StallLog.floorNanos {
                reason = .suspend
            } else if stalls.longest(from: open.upperStartNanos, to: last) >= 500_000_000 {
                reason = .stopped
            } else {
                reason = .starved
            }
        }
        return HangDetection(
            id: open.id, kind: judged >= timing.hangNanos ? .hang : .hitch, lowerNanos: last - open.firstSentNanos,
            upperNanos: last - open.upperStartNanos, durationNanos: adjusted, stallNanos: upperStall,
            suppressed: reason, fatal: open.fatalReported, inProgress: false,
            servingTid: open.servingTid, samplesTaken: open.samplesTaken, startedWallNanos: open.startedWallNanos)
    }
}
