// The value a begin returns and an end consumes: small, trivially copyable, never allocated.

/// An open span, as returned by ``SpanRecorder/begin(_:budgetNanos:lifetime:site:)``.
///
/// A plain value with no class references, so creating, copying and passing it costs no
/// allocation and no reference counting. Ending a token twice is harmless for registered spans
/// (the second end finds nothing open) and records the span twice for scoped ones: the recorder
/// keeps no per-span state on that path. `Perf.Span`, which wraps a token, is `~Copyable` with a
/// consuming `end()`, so through the `Perf` facade a second end does not compile.
public struct SpanToken: Sendable {
    /// The span's name.
    public let name: StaticString
    /// CLOCK_MONOTONIC nanoseconds at begin.
    public let startNanos: UInt64
    /// Durations at or past this are recorded: budget + 1, or 0 for "no budget: record every
    /// time". One unsigned compare decides the slow path.
    @usableFromInline let recordThresholdNanos: UInt64
    /// Where the span began.
    public let site: CallSite
    /// The registry id of a registered span; 0 for a scoped span.
    public let id: UInt64
    /// The parent scope the span began in (``ChildScopes``); 0 for a root.
    public let parent: UInt64

    /// Creates a token; only the recorder does, so the threshold encoding stays private.
    @inlinable
    init(name: StaticString, startNanos: UInt64, budgetNanos: UInt64?, site: CallSite, id: UInt64, parent: UInt64 = 0) {
        self.name = name
        self.startNanos = startNanos
        if let budgetNanos {
            recordThresholdNanos = budgetNanos == .max ? .max : budgetNanos + 1
        } else {
            recordThresholdNanos = 0
        }
        self.site = site
        self.id = id
        self.parent = parent
    }

    /// What the span sampler compares the time open with: budget + 1, 0 for no budget.
    @inlinable package var overBudgetThresholdNanos: UInt64 { recordThresholdNanos }

    /// The budget; `nil` means the span is recorded every time it ends.
    public var budgetNanos: UInt64? { Self.budget(recordThresholdNanos: recordThresholdNanos) }

    /// The budget a threshold encodes.
    static func budget(recordThresholdNanos threshold: UInt64) -> UInt64? {
        threshold == 0 ? nil : (threshold == .max ? .max : threshold - 1)
    }

    /// True for keyed, bounded and indefinite spans, which live in the open-span registry.
    public var isRegistered: Bool { id != 0 }
}
