// The production expiry timer: one DispatchSourceTimer on a private serial queue.
import Dispatch
import Synchronization

/// An ``ExpiryTimer`` backed by one `DispatchSourceTimer`.
///
/// `DispatchTime(uptimeNanoseconds:)` is CLOCK_MONOTONIC on Linux, the same clock as
/// ``SystemClock``. Pair it with ``SystemClock`` only: another clock's deadlines would be
/// misread.
public final class DispatchExpiryTimer: ExpiryTimer {
    private let queue = DispatchQueue(label: "perf.span-expiry")
    private let source: SendableTimerSource
    private let handler = HandlerBox()

    /// Creates a disarmed timer.
    public init() {
        source = SendableTimerSource(DispatchSource.makeTimerSource(queue: queue))
        source.timer.setEventHandler { [handler] in
            handler.current.withLock { $0 }?()
        }
        source.timer.activate()
    }

    deinit {
        source.timer.cancel()
    }

    /// Sets what runs (on the timer's private queue) when the timer fires.
    public func setHandler(_ handler: @escaping @Sendable () -> Void) {
        self.handler.current.withLock { $0 = handler }
    }

    /// Arms the timer for `deadline` (CLOCK_MONOTONIC nanoseconds), replacing any earlier arming.
    public func arm(atMonotonicNanos deadline: UInt64) {
        source.timer.schedule(deadline: DispatchTime(uptimeNanoseconds: deadline), leeway: .milliseconds(1))
    }

    /// Cancels the current arming.
    public func disarm() {
        source.timer.schedule(deadline: .distantFuture)
    }
}

/// Dispatch sources are thread-safe but not declared `Sendable` on Linux.
private struct SendableTimerSource: @unchecked Sendable {
    let timer: any DispatchSourceTimer
    init(_ timer: any DispatchSourceTimer) { self.timer = timer }
}

/// The handler, shared with the event-handler closure (a `Mutex` itself cannot be captured).
private final class HandlerBox: Sendable {
    let current = Mutex<(@Sendable () -> Void)?>(nil)
}
