// How a span closed, and how long it may stay open.

/// How a span closed.
public enum SpanExit: String, Sendable, CaseIterable {
    /// The work completed.
    case success
    /// The work threw (the reason is the error's type name).
    case failure
    /// The work was cancelled (`CancellationError`).
    case cancelled
    /// A keyed span was begun again under the same key before this one ended.
    case superseded
    /// A `.bounded` span stayed open past its lifetime budget and the expiry watchdog closed it.
    case expired
    /// The process died with the span open (reported by crash recovery).
    case orphaned

    /// The exit `measure` derives from a thrown error: `CancellationError` is `cancelled`,
    /// anything else `failure`.
    public static func derived(from error: any Error) -> SpanExit {
        error is CancellationError ? .cancelled : .failure
    }

    /// The reason recorded for a thrown error: its type name only, never its message, which may
    /// carry user content.
    public static func reason(for error: any Error) -> String {
        String(describing: type(of: error))
    }
}

/// How long a span may stay open, and so whether it is registered.
///
/// Scoped spans cost two clock reads and a histogram tick. Bounded and indefinite spans are
/// registered: visible to the expiry watchdog, to observers (the session journal, so a crash can
/// report them as orphaned) and to `openSpanCount`.
public enum SpanLifetime: Sendable, Equatable {
    /// Begins and ends in the same scope; not registered.
    case scoped
    /// Registered, and closed as `expired` if still open `budgetNanos` after its start.
    case bounded(budgetNanos: UInt64)
    /// Registered, and never closed by the watchdog.
    case indefinite
}
