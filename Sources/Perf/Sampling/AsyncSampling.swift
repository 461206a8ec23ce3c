// Sampling an asynchronous `Perf.measure`: its task runs on whatever thread picks up its next
// job, and between jobs (at an `await`) on none. A task executor of the span's own runs each job
// of the body (and of the child tasks structured under it) with the span pushed on the thread's
// stack of sampled spans, so the sampler finds the span exactly where and while it runs; a
// registry of open asynchronous spans tells it which are suspended meanwhile.
import CPerfShims
import Dispatch
import PerfCore
import Synchronization

/// The asynchronous measured spans open now, for the sampler's `suspended` count.
final class AsyncSampledSpans: Sendable {
    static let shared = AsyncSampledSpans()

    struct Entry {
        var startNanos: UInt64
        var thresholdNanos: UInt64
        var nameWord: UInt64
        /// The profile slot the sampler gave the span (0 until it passed its budget).
        var ref: UInt64 = 0
    }

    private let spans = Mutex<[UInt64: Entry]>([:])
    private let nextID = Atomic<UInt64>(1)
    /// Spans open now: the sampler's tick reads no dictionary while it is 0.
    private let count = Atomic<Int>(0)

    var isEmpty: Bool { count.load(ordering: .relaxed) == 0 }

    func add(startNanos: UInt64, thresholdNanos: UInt64, nameWord: UInt64) -> UInt64 {
        let id = nextID.add(1, ordering: .relaxed).oldValue
        spans.withLock {
            $0[id] = Entry(startNanos: startNanos, thresholdNanos: thresholdNanos, nameWord: nameWord)
        }
        count.add(1, ordering: .relaxed)
        return id
    }

    /// The span's profile slot, for its end to take.
    func setRef(_ id: UInt64, _ ref: UInt64) { spans.withLock { $0[id]?.ref = ref } }

    /// Removes the span; its profile slot, 0 when it has none.
    func remove(_ id: UInt64) -> UInt64 {
        guard let removed = spans.withLock({ $0.removeValue(forKey: id) }) else { return 0 }
        count.subtract(1, ordering: .relaxed)
        return removed.ref
    }

    var all: [UInt64: Entry] { spans.withLock { $0 } }
}

/// Runs each job of one asynchronous span's task (and its structured child tasks) on a global
/// Dispatch queue of the job's priority, as the default executor does on Linux, with the span on
/// the running thread's stack of sampled spans for the job's length.
@usableFromInline
final class SampledTaskExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: every stored property is a constant.
    let id: UInt64
    let startNanos: UInt64
    let thresholdNanos: UInt64
    let nameWord: UInt64

    init(id: UInt64, startNanos: UInt64, thresholdNanos: UInt64, nameWord: UInt64) {
        self.id = id
        self.startNanos = startNanos
        self.thresholdNanos = thresholdNanos
        self.nameWord = nameWord
    }

    @usableFromInline
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let queue = DispatchQueue.global(qos: Self.qos(job.priority))
        queue.async { [self] in
            let pushed = perf_sampled_push_id(startNanos, thresholdNanos, nameWord, id)
            job.runSynchronously(on: asUnownedTaskExecutor())
            if pushed != 0 { _ = perf_sampled_pop() }
        }
    }

    private static func qos(_ priority: JobPriority) -> DispatchQoS.QoSClass {
        switch priority.rawValue {
        case 25...: .userInitiated
        case 21..<25: .default
        case 17..<21: .utility
        default: .background
        }
    }
}

extension Perf {
    /// The executor that makes an asynchronous measure's span sampled, registered as open; `nil`
    /// when no sampler runs or the span has no budget (the body then runs as it would anyway).
    @usableFromInline
    static func sampledExecutor(for span: borrowing Span, name: StaticString) -> SampledTaskExecutor? {
        guard let token = span.token, perf_sampling_is_enabled() != 0, token.overBudgetThresholdNanos != 0 else {
            return nil
        }
        let word = ChildScopes.nameWord(name)
        let id = AsyncSampledSpans.shared.add(
            startNanos: token.startNanos, thresholdNanos: token.overBudgetThresholdNanos, nameWord: word)
        return SampledTaskExecutor(
            id: id, startNanos: token.startNanos, thresholdNanos: token.overBudgetThresholdNanos, nameWord: word)
    }

    /// The span's profile slot (0 when it was never over budget at a tick); it is no longer open.
    @usableFromInline
    static func endSampledExecutor(_ executor: SampledTaskExecutor?) -> UInt64 {
        guard let executor else { return 0 }
        return AsyncSampledSpans.shared.remove(executor.id)
    }
}
