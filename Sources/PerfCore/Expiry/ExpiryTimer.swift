// The timer seam of the span-expiry watchdog: one timer, re-armed at the earliest deadline.

/// The single timer behind span expiry and overdue detection.
///
/// The recorder keeps exactly one deadline armed, the earliest of all open spans' expiry and
/// overdue deadlines, instead of one timer per span. Deadlines are CLOCK_MONOTONIC nanoseconds
/// as read from the recorder's ``PerfClock``.
///
/// Production uses ``DispatchExpiryTimer``; tests use ``ManualExpiryTimer`` with a
/// ``ManualClock``, advancing time and firing by hand instead of sleeping.
public protocol ExpiryTimer: AnyObject, Sendable {
    /// Sets what runs when the timer fires. Called once, by the recorder that owns the timer.
    func setHandler(_ handler: @escaping @Sendable () -> Void)
    /// Arms the timer for `deadline`, replacing any earlier arming.
    func arm(atMonotonicNanos deadline: UInt64)
    /// Cancels the current arming, if any.
    func disarm()
}
