// What a hang watchdog pings, and how a ping reaches it.
import Dispatch

extension Perf.HangWatchdog {
    /// The execution context a watchdog monitors.
    ///
    /// A ping is a tiny closure enqueued on the target; the target is hung while its ping waits.
    public enum Target: Sendable {
        /// The main dispatch queue (served by the main thread).
        case main
        /// A dispatch queue; serial queues are the useful case.
        case queue(DispatchQueue)
        /// Anything that can run a closure, for example a SwiftNIO event loop's `execute`.
        case custom(name: String, enqueue: @Sendable (@escaping @Sendable () -> Void) -> Void)
        /// The main actor.
        case mainActor
        /// Swift concurrency's cooperative thread pool (a detached task per ping).
        case cooperativePool

        /// The name episodes carry.
        public var name: String {
            switch self {
            case .main: return "main"
            case .queue(let queue): return queue.label
            case .custom(let name, _): return name
            case .mainActor: return "MainActor"
            case .cooperativePool: return "cooperative-pool"
            }
        }

        func enqueue(_ ping: @escaping @Sendable () -> Void) {
            switch self {
            case .main: DispatchQueue.main.async(execute: ping)
            case .queue(let queue): queue.async(execute: ping)
            case .custom(_, let enqueue): enqueue(ping)
            case .mainActor: Task { @MainActor in ping() }
            case .cooperativePool: Task.detached { ping() }
            }
        }
    }
}
