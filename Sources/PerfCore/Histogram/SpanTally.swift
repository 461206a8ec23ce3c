// Per-name counts that no histogram holds: ends over budget and ends that did not succeed. Kept
// beside the name's histogram in span memory, so they are exact whatever the ledger's cap kept,
// and survive a kill.
import CPerfShims

/// How many of one span name's ends were over budget, and how many exited other than `success`.
///
/// Counted on the slow paths only (an end over budget, a thrown or cancelled `measure`, a
/// registered span closed for the program), so an under-budget end that succeeds pays nothing.
public struct SpanTally: Sendable, Equatable {
    /// Ends whose duration exceeded their budget.
    public var overBudget: UInt64 = 0
    /// Their durations together, nanoseconds.
    public var overBudgetNanos: UInt64 = 0
    /// Ends that exited `failure`.
    public var failure: UInt64 = 0
    /// Ends that exited `cancelled`: a `measure` that threw `CancellationError`, or a registered
    /// span still open at shutdown.
    public var cancelled: UInt64 = 0
    /// Registered spans closed because the same key began again.
    public var superseded: UInt64 = 0
    /// Bounded spans the expiry watchdog closed.
    public var expired: UInt64 = 0

    /// Creates a tally.
    public init(
        overBudget: UInt64 = 0, overBudgetNanos: UInt64 = 0, failure: UInt64 = 0, cancelled: UInt64 = 0,
        superseded: UInt64 = 0, expired: UInt64 = 0
    ) {
        self.overBudget = overBudget
        self.overBudgetNanos = overBudgetNanos
        self.failure = failure
        self.cancelled = cancelled
        self.superseded = superseded
        self.expired = expired
    }

    /// True when nothing was counted.
    public var isEmpty: Bool { self == SpanTally() }

    /// The exits a tally counts, in report order.
    public static let tallied: [SpanExit] = [.failure, .cancelled, .superseded, .expired]

    /// The count of one exit; `success` and `orphaned` are not tallied (0).
    public func count(of exit: SpanExit) -> UInt64 {
        switch exit {
        case .failure: failure
        case .cancelled: cancelled
        case .superseded: superseded
        case .expired: expired
        case .success, .orphaned: 0
        }
    }

    /// Adds another tally (another session, another literal of the same text).
    public mutating func merge(_ other: SpanTally) {
        overBudget &+= other.overBudget
        overBudgetNanos = LatencyHistogram.saturatingAdd(overBudgetNanos, other.overBudgetNanos)
        failure &+= other.failure
        cancelled &+= other.cancelled
        superseded &+= other.superseded
        expired &+= other.expired
    }
}

extension SpanMemoryLayout {
    /// The words of a tally block (128 bytes, one allocation of the arena), in order.
    enum TallyWord: Int, CaseIterable {
        case overBudget = 0, overBudgetNanos, failure, cancelled, superseded, expired
    }

    /// The word a non-success exit is counted in; nil for `success` and `orphaned`.
    static func tallyWord(of exit: SpanExit) -> TallyWord? {
        switch exit {
        case .failure: .failure
        case .cancelled: .cancelled
        case .superseded: .superseded
        case .expired: .expired
        case .success, .orphaned: nil
        }
    }
}

extension AtomicHistogramEntry {
    /// The entry's tally block, claimed on first use; nil when the arena is used up.
    private func tallyBlock(memory: SpanMemory) -> UnsafeMutableRawPointer? {
        let slot = (raw + L.entryTallyOffset).assumingMemoryBound(to: UInt32.self)
        var ref = perf_atomic_load_u32_acquire(slot)
        if ref == 0 {
            let fresh = memory.allocate(bytes: L.tallyBytes)
            guard fresh != 0 else { return nil }
            (memory.arena + Int(fresh) * L.refUnit).storeBytes(
                of: L.tallyTag, toByteOffset: L.tallyTagOffset, as: UInt64.self)
            ref = perf_atomic_cas_u32(slot, 0, fresh) != 0 ? fresh : perf_atomic_load_u32_acquire(slot)
        }
        return memory.arena + Int(ref) * L.refUnit
    }

    /// Counts one end: over budget (with its duration) and its exit, with atomic adds (any thread).
    /// False when the arena had no room for the block.
    func tally(overBudgetNanos: UInt64?, exit: SpanExit, memory: SpanMemory) -> Bool {
        let word = SpanMemoryLayout.tallyWord(of: exit)
        guard overBudgetNanos != nil || word != nil else { return true }
        guard let block = tallyBlock(memory: memory) else { return false }
        func add(_ which: SpanMemoryLayout.TallyWord, _ value: UInt64) {
            _ = perf_atomic_add_u64((block + which.rawValue * 8).assumingMemoryBound(to: UInt64.self), value)
        }
        if let overBudgetNanos {
            add(.overBudget, 1)
            add(.overBudgetNanos, overBudgetNanos)
        }
        if let word { add(word, 1) }
        return true
    }
}
