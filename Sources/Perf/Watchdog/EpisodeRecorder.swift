// Turns the detector's timing-only episodes into full episodes (thread, stack, stuck frames,
// culprit, cooldown) and delivers them. Runs on the watchdog thread only.
import CPerfShims

struct EpisodeRecorder {
    private let targetName: String
    private let configuration: Perf.HangWatchdog.Configuration
    private let statistics: WatchdogStatisticsBox
    private var samplingEpisode: UInt64?
    private var samples: [Int32: [ThreadSample]] = [:]
    private var failures: [Int32: String] = [:]
    /// Distinct threads that answered recent pings, newest last: the candidates to sample. Even
    /// the main queue is not pinned to the main thread: after `dispatchMain()` the main thread
    /// has exited and a worker drains the main queue.
    private var recentTids: [Int32] = []
    private var symbolicator = Symbolicator()
    private var cooldown: CulpritCooldown

    init(
        targetName: String, configuration: Perf.HangWatchdog.Configuration,
        statistics: WatchdogStatisticsBox
    ) {
        self.targetName = targetName
        self.configuration = configuration
        self.statistics = statistics
        self.cooldown = CulpritCooldown(cooldownNanos: configuration.culpritCooldown.watchdogNanos)
    }

    /// Remembers the thread that answered the latest ping.
    mutating func noteServed(by tid: Int32) {
        guard recentTids.last != tid else { return }
        recentTids.removeAll { $0 == tid }
        recentTids.append(tid)
        if recentTids.count > 4 { recentTids.removeFirst() }
    }

    /// Acts on one tick's output: samples, then reports.
    mutating func handle(_ output: HangTickOutput, nowNanos: UInt64) {
        if let discarded = output.discarded, discarded == samplingEpisode { resetSamples() }
        if let id = output.sampleEpisode { sample(for: id) }
        if let ongoing = output.ongoing {
            let episode = build(ongoing, nowNanos: nowNanos)
            HangReporting.handler?.hangOngoing(episode, id: episode.id)
        }
        if let fatal = output.fatal, let onFatal = configuration.onFatal {
            onFatal(build(fatal, nowNanos: nowNanos))
        }
        for ended in output.ended {
            let episode = build(ended, nowNanos: nowNanos)
            if ended.id == samplingEpisode { resetSamples() }
            statistics.update {
                if episode.kind == .hang { $0.hangs += 1 } else { $0.hitches += 1 }
                if episode.suppressed != nil { $0.suppressed += 1 }
            }
            HangReporting.handler?.hangEnded(episode, id: episode.id)
            configuration.onEpisode?(episode)
        }
    }

    /// The threads to sample: those that answered recent pings first, then every other thread of
    /// the process (bounded). A queue's next item may run on a worker that never served a ping,
    /// and the thread that serves the late ping is the one that was blocked, so sampling them all
    /// at detection and keeping the server's samples is the only way to be sure to hold its stack.
    /// SIGPROF goes to each of them only while a hang is in progress, as a profiler's would.
    private func candidates() -> [Int32] {
        let own = perf_gettid()
        var result = recentTids.filter { $0 != own }
        for tid in ProcProbe.threadIDs(limit: Self.maximumCandidates) where result.count < Self.maximumCandidates {
            if tid != own && !result.contains(tid) { result.append(tid) }
        }
        return result
    }

    private static let maximumCandidates = 64

    private mutating func resetSamples() {
        samplingEpisode = nil
        samples.removeAll()
        failures.removeAll()
    }

    private mutating func sample(for id: UInt64) {
        if samplingEpisode != id {
            resetSamples()
            samplingEpisode = id
        }
        let started = perf_monotonic_ns()
        var taken: UInt64 = 0
        var failed: UInt64 = 0
        for tid in candidates() {
            switch StackSampler.sample(tid: tid) {
            case .success(let sample):
                samples[tid, default: []].append(sample)
                taken += 1
            case .failure(.unavailable(let reason)), .failure(.failed(let reason)):
                failures[tid] = reason
                failed += 1
            }
        }
        let elapsed = perf_monotonic_ns() - started
        statistics.update {
            $0.samplesTaken += taken
            $0.sampleFailures += failed
            $0.sampleNanos += elapsed
        }
    }

    private mutating func build(_ detection: HangDetection, nowNanos: UInt64) -> Perf.HangWatchdog.Episode {
        let started = perf_monotonic_ns()
        let symbolicated = samples.mapValues { $0.map { symbolicator.frames($0.addresses) } }
        let tid = detection.servingTid ?? likelyBlockedThread(symbolicated)
        let frames = tid.flatMap { symbolicated[$0] } ?? []
        let (stuck, culprit) = StackAnalysis.stuckFrames(frames)
        statistics.update { $0.symbolicationNanos += perf_monotonic_ns() - started }
        let thread = tid.map { tid in samples[tid]?.last?.thread ?? ProcProbe.thread(tid).withoutState }
        let isFullRecord =
            detection.inProgress || cooldown.admit(culprit: culprit?.symbol ?? culprit?.description, now: nowNanos)
        return Perf.HangWatchdog.Episode(
            id: detection.id, targetName: targetName, kind: detection.kind,
            lowerMs: Double(detection.lowerNanos) / 1e6, upperMs: Double(detection.upperNanos) / 1e6,
            durationMs: Double(detection.durationNanos) / 1e6, stallMs: Double(detection.stallNanos) / 1e6,
            suppressed: detection.suppressed, fatal: detection.fatal, inProgress: detection.inProgress,
            thread: thread, stack: frames.last ?? [], stuckFrames: stuck, culprit: culprit,
            stackQuality: quality(tid: tid, detection: detection), samplesTaken: detection.samplesTaken,
            isFullRecord: isFullRecord, startedWallNanos: detection.startedWallNanos)
    }

    /// While a hang is in progress on a queue, the serving thread is not known yet: prefer the
    /// candidate stuck in code of the program rather than idle in the runtime.
    /// Threads that served recent pings rank first (newest first), then the rest by tid.
    private func likelyBlockedThread(_ symbolicated: [Int32: [[Perf.HangWatchdog.Frame]]]) -> Int32? {
        let recent = recentTids.reversed().filter { symbolicated[$0] != nil }
        let others = symbolicated.keys.filter { !recentTids.contains($0) }.sorted()
        let ranked = recent + others
        return ranked.first { StackAnalysis.stuckFrames(symbolicated[$0] ?? []).culprit != nil } ?? ranked.first
    }

    private func quality(tid: Int32?, detection: HangDetection) -> Perf.HangWatchdog.StackQuality {
        if let reason = StackSampler.unavailableReason { return .unavailable(reason: reason) }
        guard detection.samplesTaken > 0 else {
            return .unavailable(reason: "the episode ended before the first stack sample")
        }
        guard let tid else { return .unavailable(reason: "no thread was sampled") }
        guard let taken = samples[tid], let last = taken.last else {
            return .unavailable(
                reason: failures[tid] ?? "thread \(tid), which served the late ping, was not among the sampled threads")
        }
        if let failure = failures[tid] { return .partial(reason: failure) }
        if last.truncated { return .partial(reason: "stack deeper than \(PERF_STACK_MAX_FRAMES) frames") }
        if taken.count < detection.samplesTaken {
            return .partial(reason: "\(taken.count) of \(detection.samplesTaken) samples of thread \(tid)")
        }
        return .full
    }
}

extension Perf.HangWatchdog.ThreadInfo {
    /// State and wait channel read after the episode mean nothing about it.
    fileprivate var withoutState: Self {
        var copy = self
        copy.state = nil
        copy.waitChannel = nil
        return copy
    }
}
