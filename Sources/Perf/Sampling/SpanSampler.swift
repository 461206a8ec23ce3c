// The span sampler: while a measured span is open past its budget, its thread is sampled every
// interval, the watchdog's way (a blocked thread read from /proc with its wait, never signalled;
// a thread that stays on the CPU gets SIGPROF), and the samples fold into the span's profile.
import CPerfShims
import Dispatch
import Glibc
import PerfCore
import Synchronization

/// Samples the threads of open spans that are past their budget.
///
/// Spans are found through each thread's stack of open measured spans (`perf_sampled_push`,
/// pushed by `Perf.measure`): a span on no thread's stack is never sampled, so no sample is
/// ever taken of code that is not the span's. One tick reads every stack; each thread with an
/// over-budget span gets one sample, counted in every over-budget span open on it (an outer
/// span's samples include its inner spans' time, as its duration does).
///
/// A span's profile is written to its slot in ``ProfileSlots`` after each sample, so it is
/// crash-durable as it grows; the span's end takes it for its ledger line.
package final class SpanSampler: @unchecked Sendable {
    // @unchecked: `state` is behind its Mutex; `thread` is set once in start and read in stop.
    /// Samples a thread, given whether a running one may be signalled; says whether it was
    /// running.
    typealias SampleThread = @Sendable (Int32, Bool) -> (Result<ThreadSample, SampleFailure>, running: Bool)
    /// A running thread may be signalled only if it has been on a CPU at least this share of the
    /// time since the sampler's previous look at it (a thread woken from a blocking call and still
    /// inside it has used none), and was running then if that look was a sample.
    static let minimumCPUShare = 0.25

    let slots: ProfileSlots
    let intervalNanos: UInt64
    let maxSamples: Int
    /// The longest the sampler sleeps while no span is past its budget: a wake costs the
    /// kernel tens of microseconds, so an idle sampler wakes when the first open span will pass
    /// its budget, and at least this often for spans that begin meanwhile.
    static let idleWakeNanos: UInt64 = 50_000_000
    /// Ticks a slot whose span left every stack stays claimed for its owner to take it.
    static let graceTicks = 100
    /// Frames kept per sampled stack, innermost first.
    static let framesKept = 24
    /// Threads read per tick.
    static let threadsPerTick = 256

    private let clock: any PerfClock
    private let sampleThread: SampleThread
    private let state = Mutex(State())
    private let stopping = Atomic<Bool>(false)
    private let cpuNanos = Atomic<UInt64>(0)
    private let wake = DispatchSemaphore(value: 0)
    private var thread: pthread_t?

    /// A synchronous span is its thread's (and its start); an asynchronous one is its id's,
    /// whichever thread runs it.
    struct Key: Hashable {
        let thread: UInt
        let start: UInt64
        var id: UInt64 = 0
    }

    /// One over-budget span being sampled.
    struct Open {
        let ref: UInt64
        var profile: SpanProfile
        /// Samples by stack and wait, in first-seen order.
        var stacks: [Fold: Int] = [:]
        var entries: [SpanProfile.Stack] = []
        /// Ticks since the span was last seen on its thread's stack.
        var goneTicks = 0
    }

    /// What samples fold by: the functions (not the addresses within them) and the wait.
    struct Fold: Hashable {
        let frames: [String]
        let wait: String?
    }

    /// A symbolicated stack, by its addresses: a thread stuck in one place repeats them.
    struct Symbolicated {
        let frames: [Perf.HangWatchdog.Frame]
        let names: [String]
        let culprit: String?
    }

    struct State {
        var open: [Key: Open] = [:]
        var symbolicator = Symbolicator()
        var symbolicated: [[UInt]: Symbolicated] = [:]
        var views = [perf_sampled_view](repeating: perf_sampled_view(), count: SpanSampler.threadsPerTick)
        var ticks: UInt64 = 0
        /// Each sampled thread at its latest sample, by tid: whether it was running, its CPU
        /// time and the wall time then.
        var previous: [Int32: (running: Bool, cpuNanos: UInt64, wallNanos: UInt64)] = [:]
        /// Over-budget spans that found every profile slot in use, with the ticks since each was
        /// last seen: each is counted once (``ProfileSlots/dropped``) and never claimed for
        /// again, so its line has no profile rather than one missing its first ticks. Forgotten
        /// as an open span's slot is, ``graceTicks`` after it left every stack.
        var unslotted: [Key: Int] = [:]
    }

    package convenience init(slots: ProfileSlots, intervalMs: Double, maxSamples: Int) {
        self.init(slots: slots, intervalMs: intervalMs, maxSamples: maxSamples, clock: SystemClock())
    }

    init(
        slots: ProfileSlots, intervalMs: Double, maxSamples: Int, clock: any PerfClock,
        sampleThread: SampleThread? = nil
    ) {
        self.slots = slots
        self.intervalNanos = UInt64(max(1, intervalMs) * 1_000_000)
        self.maxSamples = max(1, maxSamples)
        self.clock = clock
        self.sampleThread = sampleThread ?? { StackSampler.sampleForSpan(tid: $0, maySignal: $1) }
    }

    /// Measured spans push themselves onto their thread's stack from now on; with `thread`, a
    /// thread of the sampler's own ticks every interval (without, the owner calls ``tick(now:)``:
    /// a test with a manual clock).
    package func start(thread spawn: Bool = true) {
        perf_sampling_set_enabled(1)
        guard spawn, thread == nil else { return }
        stopping.store(false, ordering: .releasing)
        thread = OwnThread.spawn { [self] in
            perf_name_current_thread("perf.sampler")
            while !stopping.load(ordering: .acquiring) {
                let sleep = tick()
                var used = timespec()
                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &used)
                cpuNanos.store(UInt64(used.tv_sec) * 1_000_000_000 + UInt64(used.tv_nsec), ordering: .relaxed)
                // A timed wait, not a sleep: `stop` wakes it, so a shutdown never waits out an idle
                // sampler's 50 ms.
                _ = wake.wait(timeout: .now() + .nanoseconds(Int(sleep)))
            }
        }
    }

    /// Stops the thread (waiting at most one interval).
    package func stop() {
        perf_sampling_set_enabled(0)
        stopping.store(true, ordering: .releasing)
        if let thread {
            wake.signal()
            OwnThread.joinOrDetach(thread)
        }
        thread = nil
    }

    /// Ticks so far.
    package var ticks: UInt64 { state.withLock { $0.ticks } }

    /// CPU time the sampler's own thread has used (ticks and sleeps), for perf-bench.
    package var threadCPUNanos: UInt64 { cpuNanos.load(ordering: .relaxed) }

    /// One round: every thread with a span past its budget is sampled once. `now` is span-clock
    /// nanoseconds (what spans' starts are).
    ///
    /// Returns how long to sleep before the next tick: the interval while a span is past its
    /// budget (or an asynchronous one is open), else until an interval before the first open span
    /// will pass its budget (its thread's CPU time is read then), at least the interval and at
    /// most ``idleWakeNanos``.
    @discardableResult
    package func tick(now: UInt64? = nil) -> UInt64 {
        let now = now ?? (clock is SystemClock ? perf_fast_ns() : clock.monotonicNanos())
        return state.withLock { state in
            state.ticks += 1
            if !state.unslotted.isEmpty {
                state.unslotted = state.unslotted.compactMapValues { $0 < Self.graceTicks ? $0 + 1 : nil }
            }
            let count = state.views.withUnsafeMutableBufferPointer {
                Int(perf_sampled_snapshot($0.baseAddress, Int32($0.count)))
            }
            var seen = Set<Key>()
            var pending: [Claimed] = []
            // An interval before the first open span passes its budget (at most idleWakeNanos on).
            var firstLook = now + Self.idleWakeNanos
            for position in 0..<count {
                let view = state.views[position]
                var dueSoon = false
                withUnsafeBytes(of: view.entries) { raw in
                    for entry in raw.bindMemory(to: perf_sampled_entry.self).prefix(
                        Int(min(view.depth, UInt32(PERF_SAMPLED_DEPTH))))
                    where entry.threshold_ns != 0 {
                        let due = entry.start_ns &+ entry.threshold_ns
                        if due > entry.start_ns { firstLook = min(firstLook, due &- min(due, intervalNanos)) }
                        if due > now, due - now <= intervalNanos { dueSoon = true }
                    }
                }
                if let claimed = claimOverBudget(view, now: now, seen: &seen, state: &state) {
                    pending.append(claimed)
                } else if dueSoon, let cpu = StackSampler.threadCPUNanos(view.tid) {
                    // A span passes its budget before the next tick: its thread's CPU time now is
                    // what that tick's signal rule compares with, so a thread on the CPU is sampled
                    // at its span's first over-budget tick instead of only counted missed. Whether
                    // it was running is not read (a /proc file); the CPU share decides that.
                    state.previous[view.tid] = (true, cpu, perf_monotonic_ns())
                }
            }
            // Every over-budget span is claimed before any thread is sampled: a sample can take
            // milliseconds (the first one loads the symbol tables), and a span that ends meanwhile
            // still takes what its slot holds.
            for claimed in pending { sample(claimed, state: &state) }
            countSuspended(now: now, seen: &seen, state: &state)
            if state.previous.count > 4 * Self.threadsPerTick { state.previous.removeAll() }
            for (key, open) in state.open where !seen.contains(key) {
                var open = open
                open.goneTicks += 1
                if slots.isTaken(open.ref) || open.goneTicks > Self.graceTicks {
                    slots.release(open.ref, abandoned: true)
                    state.open[key] = nil
                } else {
                    state.open[key] = open
                }
            }
            if !seen.isEmpty || !AsyncSampledSpans.shared.isEmpty { return intervalNanos }
            // Idle: wake for the look an interval before the first open span passes its budget.
            return max(intervalNanos, firstLook > now ? firstLook - now : 0)
        }
    }

    /// A thread's over-budget spans, each with its slot, waiting for the thread's sample.
    struct Claimed {
        let view: perf_sampled_view
        let entries: [perf_sampled_entry]
        let names: [String]
        let keys: [Key]
    }

    /// Claims a slot for each span of `view` past its budget that has none (its slot holds a
    /// profile counting this tick missed until the sample replaces it); returns them, or `nil`
    /// when the thread has none to sample.
    private func claimOverBudget(
        _ view: perf_sampled_view, now: UInt64, seen: inout Set<Key>, state: inout State
    ) -> Claimed? {
        let kept = Int(min(view.depth, UInt32(PERF_SAMPLED_DEPTH)))
        // Most ticks find no span past its budget: that is decided before anything is allocated.
        let anyOver = withUnsafeBytes(of: view.entries) { raw in
            raw.bindMemory(to: perf_sampled_entry.self).prefix(kept).contains {
                $0.threshold_ns != 0 && now > $0.start_ns && now - $0.start_ns >= $0.threshold_ns
            }
        }
        guard anyOver else { return nil }
        let entries = withUnsafeBytes(of: view.entries) {
            Array($0.bindMemory(to: perf_sampled_entry.self).prefix(kept))
        }
        let names = entries.map { ChildScopes.name(of: $0.name_word) }
        var sampled: [Key] = []
        for (index, entry) in entries.enumerated() {
            guard entry.threshold_ns != 0, now > entry.start_ns, now - entry.start_ns >= entry.threshold_ns else {
                continue
            }
            let key =
                entry.span_id == 0
                ? Key(thread: UInt(bitPattern: view.thread), start: entry.start_ns)
                : Key(thread: 0, start: entry.start_ns, id: entry.span_id)
            // An asynchronous span whose structured child tasks run on several threads at once
            // is sampled once a tick, on the first of them.
            guard !seen.contains(key) else { continue }
            if state.open[key] == nil {
                let budget = entry.threshold_ns == .max ? .max : entry.threshold_ns - 1
                guard
                    let ref = claimOnce(
                        key, name: names[index], startNanos: entry.start_ns, budgetNanos: budget, now: now,
                        tid: view.tid, state: &state)
                else { continue }
                if entry.span_id != 0 {
                    AsyncSampledSpans.shared.setRef(entry.span_id, ref)
                } else if perf_sampled_attach(view.thread, UInt32(index), entry.start_ns, ref) == 0 {
                    slots.release(ref, abandoned: true)
                    continue
                }
                let open = Open(ref: ref, profile: SpanProfile(intervalMs: Double(intervalNanos) / 1e6))
                var provisional = open.profile
                provisional.missed = 1
                slots.write(ref, provisional)
                state.open[key] = open
            }
            seen.insert(key)
            state.open[key]?.goneTicks = 0
            if state.open[key]?.profile.capped == false { sampled.append(key) }
        }
        return sampled.isEmpty ? nil : Claimed(view: view, entries: entries, names: names, keys: sampled)
    }

    /// Samples a thread once and counts the sample (or a miss) in each of its claimed spans.
    private func sample(_ claimed: Claimed, state: inout State) {
        let view = claimed.view
        let cpu = StackSampler.threadCPUNanos(view.tid) ?? 0
        let wall = perf_monotonic_ns()
        var maySignal = false
        if let before = state.previous[view.tid], before.running, wall > before.wallNanos, cpu >= before.cpuNanos {
            maySignal = Double(cpu - before.cpuNanos) >= Self.minimumCPUShare * Double(wall - before.wallNanos)
        }
        let (outcome, running) = sampleThread(view.tid, maySignal)
        state.previous[view.tid] = (running, cpu, wall)
        var stack: SpanProfile.Stack?
        if case .success(let sample) = outcome { stack = Self.stack(of: sample, state: &state) }
        for key in claimed.keys {
            guard var open = state.open[key] else { continue }
            if let stack {
                open.profile.samples += 1
                let identity = Fold(frames: stack.frames, wait: stack.wait)
                if let position = open.stacks[identity] {
                    open.entries[position].count += 1
                } else {
                    open.stacks[identity] = open.entries.count
                    open.entries.append(stack)
                }
            } else {
                open.profile.missed += 1
            }
            open.profile.capped = open.profile.ticks >= maxSamples
            let depth = claimed.entries.firstIndex { $0.start_ns == key.start }.map { $0 + 1 } ?? claimed.entries.count
            open.profile.open = Array(claimed.names[depth...])
            open.profile.top = Self.top(open.entries)
            slots.write(open.ref, open.profile)
            state.open[key] = open
        }
    }

    /// A profile slot for the span `key`, unless it already found every slot in use: a span is
    /// counted in ``ProfileSlots/dropped`` once, however many ticks find it (``State/unslotted``).
    private func claimOnce(
        _ key: Key, name: String, startNanos: UInt64, budgetNanos: UInt64, now: UInt64, tid: Int32,
        state: inout State
    ) -> UInt64? {
        guard state.unslotted[key] == nil else {
            state.unslotted[key] = 0
            return nil
        }
        let wall = clock.wallNanos()
        let age = now - startNanos
        guard
            let ref = slots.claim(
                name: name, startNanos: startNanos, budgetNanos: budgetNanos,
                startWallNanos: wall > age ? wall - age : 0, tid: tid)
        else {
            state.unslotted[key] = 0
            return nil
        }
        return ref
    }

    /// Every open asynchronous span past its budget that no thread ran at this tick is
    /// suspended (awaiting): counted, never sampled.
    private func countSuspended(now: UInt64, seen: inout Set<Key>, state: inout State) {
        guard !AsyncSampledSpans.shared.isEmpty else { return }
        for (id, span) in AsyncSampledSpans.shared.all {
            guard now > span.startNanos, now - span.startNanos >= span.thresholdNanos else { continue }
            let key = Key(thread: 0, start: span.startNanos, id: id)
            guard !seen.contains(key) else { continue }
            seen.insert(key)
            if state.open[key] == nil {
                guard
                    let ref = claimOnce(
                        key, name: ChildScopes.name(of: span.nameWord), startNanos: span.startNanos,
                        budgetNanos: span.thresholdNanos - 1, now: now, tid: 0, state: &state)
                else { continue }
                AsyncSampledSpans.shared.setRef(id, ref)
                state.open[key] = Open(ref: ref, profile: SpanProfile(intervalMs: Double(intervalNanos) / 1e6))
            }
            guard var open = state.open[key], !open.profile.capped else { continue }
            open.goneTicks = 0
            open.profile.suspended += 1
            open.profile.capped = open.profile.ticks >= maxSamples
            slots.write(open.ref, open.profile)
            state.open[key] = open
        }
    }

    /// A sample as one profile entry: its frames by function (no offsets, so samples anywhere in
    /// a function fold together), its culprit, and its wait when blocked, privacy-filtered.
    static func stack(of sample: ThreadSample, state: inout State) -> SpanProfile.Stack {
        let symbolicated: Symbolicated
        if let known = state.symbolicated[sample.addresses] {
            symbolicated = known
        } else {
            let frames = state.symbolicator.frames(sample.addresses)
            let culprit = StackAnalysis.stuckFrames([frames]).culprit
            symbolicated = Symbolicated(
                frames: frames, names: frames.prefix(framesKept).map(Self.frameName),
                culprit: culprit.flatMap { $0.symbol.map(SymbolNames.short) })
            if state.symbolicated.count >= 4096 { state.symbolicated.removeAll(keepingCapacity: true) }
            state.symbolicated[sample.addresses] = symbolicated
        }
        var wait: String?
        if let call = sample.syscall,
            let described = WaitDescription.describe(
                call, frames: symbolicated.frames, holder: { (ProcProbe.thread($0), nil) })
        {
            wait = PrivacyFilter.sanitize(detail: described.description)
        }
        return SpanProfile.Stack(count: 1, culprit: symbolicated.culprit, wait: wait, frames: symbolicated.names)
    }

    /// A frame as a profile names it: the function, or the address and image when unnamed.
    static func frameName(_ frame: Perf.HangWatchdog.Frame) -> String {
        if let symbol = frame.symbol { return SymbolNames.short(symbol) }
        let image = frame.image.split(separator: "/").last.map(String.init) ?? frame.image
        return "0x\(String(frame.address, radix: 16)) (\(image))"
    }

    /// The most frequent stacks, at most ``SpanProfile/stacksKept``, then one `other` entry
    /// holding the rest's count.
    static func top(_ entries: [SpanProfile.Stack]) -> [SpanProfile.Stack] {
        let sorted = entries.enumerated().sorted { lhs, rhs in
            lhs.element.count != rhs.element.count ? lhs.element.count > rhs.element.count : lhs.offset < rhs.offset
        }.map(\.element)
        guard sorted.count > SpanProfile.stacksKept else { return sorted }
        let rest = sorted[SpanProfile.stacksKept...].reduce(0) { $0 + $1.count }
        return Array(sorted.prefix(SpanProfile.stacksKept))
            + [SpanProfile.Stack(count: rest, culprit: SpanProfile.otherName, wait: nil, frames: [])]
    }
}
