// The production expiry timer: one DispatchSourceTimer on a private serial queue.
import Dispatch
import Foundation

/// An ``ExpiryTimer`` backed by one `DispatchSourceTimer`.
///
/// `DispatchTime(uptimeNanoseconds:)` is CLOCK_MONOTONIC on Linux, the same clock as
/// ``SystemClock``. Pair it with ``SystemClock`` only: another clock's deadlines would be
/// misread.
public final class DispatchExpiryTimer: ExpiryTimer {
    private let queue: DispatchQueue
    private let source: SendableTimerSource
    private let handler = HandlerBox()

    /// Creates a disarmed timer whose handler runs on a serial queue named `label` (the name
    /// stack dumps show for its thread).
    public init(label: String = "perf.span-expiry") {
        queue = DispatchQueue(label: label)
        source = SendableTimerSource(DispatchSource.makeTimerSource(queue: queue))
        source.timer.setEventHandler { [handler] in
            handler.current?()
        }
        source.timer.activate()
    }

    deinit {
        source.timer.cancel()
    }

    /// Sets what runs (on the timer's private queue) when the timer fires.
    public func setHandler(_ handler: @escaping @Sendable () -> Void) {
        self.handler.current = handler
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

/// The handler, shared with the event-handler closure.
///
/// Not a `Mutex<(() -> Void)?>`: with Swift 6.3.1 on Linux, copying an optional closure out of
/// `Mutex.withLock { $0 }` leaks about 150 bytes per call, and the timer reads the handler on
/// every firing (the reliability soak's keyed spans grew memory by 26 B per span). A lock around
/// a plain stored property does not leak.
private final class HandlerBox: @unchecked Sendable {
    private let lock = NSLock()
    private var handler: (@Sendable () -> Void)?

    var current: (@Sendable () -> Void)? {
        get {
            lock.lock()
            defer { lock.unlock() }
            return handler
        }
        set {
            lock.lock()
            defer { lock.unlock() }
            handler = newValue
        }
    }
}
