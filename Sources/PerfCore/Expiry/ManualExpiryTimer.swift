// The test expiry timer: remembers its deadline and fires only when the test says so.
import Synchronization

/// An ``ExpiryTimer`` that never fires on its own.
///
/// Tests advance a ``ManualClock`` and call ``fireIfDue(nowNanos:)`` (or ``fire()``), so expiry
/// and overdue behaviour is exercised without sleeping.
///
/// ```swift
/// let clock = ManualClock()
/// let timer = ManualExpiryTimer()
/// let recorder = SpanRecorder(histograms: .init(), pipeline: .init(), clock: clock, expiryTimer: timer)
/// clock.advance(byMilliseconds: 500)
/// timer.fireIfDue(nowNanos: clock.monotonicNanos())
/// ```
public final class ManualExpiryTimer: ExpiryTimer {
    private let state = Mutex<(deadline: UInt64?, handler: (@Sendable () -> Void)?)>((nil, nil))

    /// Creates a disarmed timer.
    public init() {}

    /// Stores the handler `fire` will call.
    public func setHandler(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.handler = handler }
    }

    /// Remembers the deadline.
    public func arm(atMonotonicNanos deadline: UInt64) {
        state.withLock { $0.deadline = deadline }
    }

    /// Forgets the deadline.
    public func disarm() {
        state.withLock { $0.deadline = nil }
    }

    /// The deadline currently armed, if any.
    public var armedDeadline: UInt64? { state.withLock { $0.deadline } }

    /// Fires now, armed or not (a spurious wake-up must be harmless too).
    public func fire() {
        let handler = state.withLock { state -> (@Sendable () -> Void)? in
            state.deadline = nil
            return state.handler
        }
        handler?()
    }

    /// Fires if the armed deadline is at or before `nowNanos`; returns whether it fired.
    @discardableResult
    public func fireIfDue(nowNanos: UInt64) -> Bool {
        guard let deadline = armedDeadline, deadline <= nowNanos else { return false }
        fire()
        return true
    }
}
