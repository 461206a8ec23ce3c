// Turns the detector's timing-only episodes into full episodes (thread, stack, stuck frames,
// culprit, cooldown) and delivers them. Runs on the watchdog thread only.
import CPerfShims
import PerfCore

struct EpisodeRecorder {
    private let target: Perf.HangWatchdog.Target
    private let targetName: String
    private let configuration: Perf.HangWatchdog.Configuration
    private let statistics: WatchdogStatisticsBox
    private var samplingEpisode: UInt64?
    private var samples: [Int32: [ThreadSample]] = [:]
    private var failures: [Int32: String] = [:]
    /// What each sampled thread waited for at its latest sample, described while it waited.
    private var waits: [Int32: Perf.HangWatchdog.Wait] = [:]
    /// The thread found holding the target at the latest sample.
    private var holder: Int32?
    /// Distinct threads that answered recent pings, newest last: the candidates to sample. Even
    /// the main queue is not pinned to the main thread: after `dispatchMain()` the main thread
    /// has exited and a worker drains the main queue.
    private var recentTids: [Int32] = []
    private var symbolicator = Symbolicator()
    private var cooldown: CulpritCooldown

    init(
        target: Perf.HangWatchdog.Target, configuration: Perf.HangWatchdog.Configuration,
        statistics: WatchdogStatisticsBox
    ) {
        self.target = target
        self.targetName = target.name
        self.configuration = configuration
        self.statistics = statistics
        self.cooldown = CulpritCooldown(cooldownNanos: configuration.culpritCooldown.watchdogNanos)
    }

    /// Remembers the thread that answered the latest ping, and names it after the target.
    mutating func noteServed(by tid: Int32) {
        guard recentTids.last != tid else { return }
        ThreadNames.shared.noteServing(tid, target: targetName)
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
            if episode.suppressed == nil {
                Probes.hang(
                    hitch: episode.kind == .hitch, target: episode.targetName, lowerMs: episode.lowerMs,
                    upperMs: episode.upperMs, culprit: episode.culprit?.symbol.map(SymbolNames.readable))
            }
            HangReporting.handler?.hangEnded(episode, id: episode.id)
            configuration.onEpisode?(episode)
        }
    }

    /// The threads to sample, and whether each may be signalled when it turns out to be running.
    ///
    /// The thread holding the target is found without a signal: a queue's drain lock names the
    /// worker draining it or the caller of `queue.sync` (``QueueOwner``); the main queue and the
    /// main actor are the main thread while it lives. Only when no holder can be named (custom
    /// targets, the cooperative pool, an unknown libdispatch) are the threads that served recent
    /// pings sampled, plus every other thread that is blocked in a system call, read without a
    /// signal. A running thread outside those is never signalled, and no thread is signalled
    /// while it is blocked.
    private func candidates() -> [(tid: Int32, maySignal: Bool)] {
        let own = perf_gettid()
        if let holder = BlockedThreadFinder.holder(of: target), holder != own { return [(holder, true)] }
        var result = recentTids.filter { $0 != own }.map { (tid: $0, maySignal: true) }
        for tid in ProcProbe.threadIDs(limit: Self.maximumCandidates) where result.count < Self.maximumCandidates {
            if tid != own && !result.contains(where: { $0.tid == tid }) { result.append((tid, false)) }
        }
        return result
    }

    private static let maximumCandidates = 64

    private mutating func resetSamples() {
        samplingEpisode = nil
        samples.removeAll()
        failures.removeAll()
        waits.removeAll()
        holder = nil
    }

    private mutating func sample(for id: UInt64) {
        if samplingEpisode != id {
            resetSamples()
            samplingEpisode = id
        }
        var taken: UInt64 = 0
        var failed: UInt64 = 0
        var signalled: UInt64 = 0
        var sampling: UInt64 = 0
        var describing: UInt64 = 0
        let threads = candidates()
        holder = threads.count == 1 && threads[0].maySignal ? threads[0].tid : nil
        for (tid, maySignal) in threads {
            let started = perf_monotonic_ns()
            let result = StackSampler.sample(tid: tid, allowSignal: maySignal)
            let sampled = perf_monotonic_ns()
            sampling += sampled - started
            switch result {
            case .success(let sample):
                samples[tid, default: []].append(sample)
                if sample.signalled { signalled += 1 }
                waits[tid] = sample.syscall.flatMap { describeWait($0, addresses: sample.addresses) }
                describing += perf_monotonic_ns() - sampled
                taken += 1
            case .failure(.notBlocked):
                break
            case .failure(.unavailable(let reason)), .failure(.failed(let reason)):
                failures[tid] = reason
                failed += 1
            }
        }
        statistics.update {
            $0.samplesTaken += taken
            $0.sampleFailures += failed
            $0.signalsSent += signalled
            $0.samplesWithoutSignal += taken - signalled
            $0.sampleNanos += sampling
            $0.symbolicationNanos += describing
        }
    }

    /// The wait, described now, while the memory its arguments point to is still the thread's.
    private mutating func describeWait(_ call: perf_thread_syscall, addresses: [UInt]) -> Perf.HangWatchdog.Wait? {
        let frames = symbolicator.frames(Array(addresses.prefix(16)))
        return WaitDescription.describe(call, frames: frames) { owner in
            let thread = ProcProbe.thread(owner)
            guard case .success(let sample) = StackSampler.sample(tid: owner, allowSignal: false) else {
                return (thread, nil)
            }
            let culprit = StackAnalysis.stuckFrames([symbolicator.frames(sample.addresses)]).culprit
            return (thread, culprit?.symbol.map(SymbolNames.readable))
        }
    }

    private mutating func build(_ detection: HangDetection, nowNanos: UInt64) -> Perf.HangWatchdog.Episode {
        let started = perf_monotonic_ns()
        let symbolicated = samples.mapValues { $0.map { symbolicator.frames($0.addresses) } }
        // The holder found while the target was stuck is the blocked thread; the thread that
        // served the late ping is the same one unless the block ran inside `queue.sync`.
        // Without a holder (custom targets, the cooperative pool), the thread that served the late
        // ping counts only if it was stuck in program code: a pool's ping may be served by a
        // thread that sat idle through the episode.
        let tid: Int32?
        if let holder, samples[holder] != nil {
            tid = holder
        } else if let serving = detection.servingTid,
            samples.isEmpty || symbolicated[serving].map({ StackAnalysis.stuckFrames($0).culprit != nil }) == true
        {
            tid = serving
        } else {
            tid = likelyBlockedThread(symbolicated) ?? detection.servingTid
        }
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
            thread: thread, wait: tid.flatMap { waits[$0] }, stack: frames.last ?? [], stuckFrames: stuck,
            culprit: culprit,
            stackQuality: quality(tid: tid, detection: detection, culprit: culprit),
            samplesTaken: detection.samplesTaken,
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

    private func quality(
        tid: Int32?, detection: HangDetection, culprit: Perf.HangWatchdog.Frame?
    ) -> Perf.HangWatchdog.StackQuality {
        Self.judgeQuality(
            samplesExpected: detection.samplesTaken, tid: tid, taken: tid.flatMap { samples[$0] },
            failure: tid.flatMap { failures[$0] }, samplerUnavailable: StackSampler.unavailableReason,
            namesCulprit: culprit != nil)
    }

    /// What an episode's stack holds, from what sampling its thread gave.
    ///
    /// - Parameters:
    ///   - samplesExpected: samples the detector asked for during the episode.
    ///   - taken: the successful samples of the episode's thread.
    ///   - failure: the latest failed sample's reason for that thread.
    ///   - namesCulprit: whether the stack reaches a frame of the program's own code.
    static func judgeQuality(
        samplesExpected: Int, tid: Int32?, taken: [ThreadSample]?, failure: String?, samplerUnavailable: String?,
        namesCulprit: Bool
    ) -> Perf.HangWatchdog.StackQuality {
        guard samplesExpected > 0 else {
            return .unavailable(reason: "the episode ended before the first stack sample")
        }
        guard let tid else { return .unavailable(reason: "no thread was sampled") }
        guard let taken, let last = taken.last else {
            if let samplerUnavailable, failure == nil { return .unavailable(reason: samplerUnavailable) }
            return .unavailable(
                reason: failure ?? "thread \(tid), which served the late ping, was not among the sampled threads")
        }
        if let failure { return .partial(reason: failure) }
        if last.truncated { return .partial(reason: "stack deeper than \(PERF_STACK_MAX_FRAMES) frames") }
        if taken.count < samplesExpected {
            return .partial(reason: "\(taken.count) of \(samplesExpected) samples of thread \(tid)")
        }
        // Every sample read, but none reached the program's own code (an unwind that stopped in
        // the runtime or a library): the stack cannot name a culprit, so it is not full.
        guard namesCulprit else {
            return .partial(reason: "no frame of the program's code in \(last.addresses.count) frames of thread \(tid)")
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
