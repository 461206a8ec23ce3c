// The public face of the hang watchdog: a thread of its own that pings a target and reports
// hitches and hangs with their bounds, stall, blocked thread and stack.
import Glibc
import Synchronization

extension Perf {
    /// Detects when a queue, the main thread or an event loop stops answering, for how long, and
    /// where it was stuck.
    ///
    /// A dedicated pthread (never a Dispatch or cooperative-pool thread) sends the target a ping
    /// every `interval`, with at most one ping outstanding. A late answer brackets the stall
    /// between a lower and an upper bound; the midpoint decides hitch or hang. Time during which
    /// the watchdog itself could not run (SIGSTOP, a debugger, a starved host) is removed first,
    /// so a stopped process does not blame its queue. While a ping is late the watchdog samples
    /// the blocked thread's stack with SIGPROF; frames present in every sample are the stuck
    /// frames, and the innermost one of the program's own code is the culprit: a `merged` function
    /// included, compiler glue (a thunk, a closure's `partial apply`) only when nothing else of the
    /// program is on the stack.
    ///
    /// Watching changes nothing for the program watched. The blocked thread is found without a
    /// signal (a queue's drain lock names its holder; the main queue is the main thread), and a
    /// thread blocked in a system call is read, not interrupted: its registers come from
    /// `/proc/self/task/<tid>/syscall` and its stack is unwound with the images' CFI, so its
    /// `sleep`, `poll` or `read` runs to its end. Only a thread that is running gets SIGPROF, and
    /// only the one holding the target. The call and what it waits on (a duration, a file
    /// descriptor and what it refers to, a lock and its holder) are the episode's ``Episode/wait``.
    ///
    /// ```swift
    /// let watchdog = Perf.HangWatchdog(monitoring: .queue(databaseQueue))
    /// watchdog.start()
    /// ```
    ///
    /// Several watchdogs may run at once, each with its own thread.
    ///
    /// - Note: Episodes go to the handler `Perf.install` sets up (ledger, histograms, session
    ///   journal) and to `Configuration.onEpisode`, on the watchdog's thread.
    /// - Warning: If SIGPROF already has a handler (a profiler), the watchdog leaves it alone and
    ///   reports stacks as unavailable.
    public final class HangWatchdog: Sendable {
        /// What this watchdog monitors.
        public let target: Target
        /// Its settings, fixed at creation.
        public let configuration: Configuration

        private let thread = WatchdogThreadControl()
        private let pauseState = Mutex<String?>(nil)
        private let paused = WatchdogFlag()
        private let statisticsBox = WatchdogStatisticsBox()

        /// Creates a stopped watchdog.
        /// - Parameters:
        ///   - target: the queue, thread or executor to ping.
        ///   - configuration: interval, thresholds, sampling and callbacks.
        public init(monitoring target: Target, configuration: Configuration = .init()) {
            self.target = target
            self.configuration = configuration
        }

        deinit { stop() }

        /// Starts the watchdog thread; does nothing if it runs already. Detection starts now
        /// (after `Configuration.startupGrace`, zero by default).
        public func start() {
            let started = thread.running.withLock { running -> Bool in
                guard running == nil else { return false }
                let stopFlag = WatchdogFlag()
                let runner = WatchdogRunner(
                    target: target, configuration: configuration, stopFlag: stopFlag, pausedFlag: paused,
                    statistics: statisticsBox)
                guard let thread = runner.spawn() else { return false }
                running = RunningThread(thread: thread, stopFlag: stopFlag)
                return true
            }
            if started { WatchdogRegistry.add(thread) }
        }

        /// Stops the watchdog and joins its thread: no callback runs after this returns. A hitch
        /// or hang still in progress is written first, marked ``Episode/inProgress``, with the
        /// time it had lasted as its duration (a lower bound). `Perf.shutdown()` stops every
        /// running watchdog this way.
        ///
        /// Called from one of the watchdog's own callbacks, it asks the thread to stop without
        /// waiting for it.
        public func stop() { thread.stop() }

        /// Suspends detection during intentional blocking (a migration, a synchronous load). A
        /// hitch or hang already under way is written, marked in progress; a ping that is not yet
        /// late is dropped.
        /// - Parameter reason: why, for `pauseReason`.
        public func pause(reason: String) {
            pauseState.withLock { $0 = reason }
            paused.value.store(true, ordering: .releasing)
        }

        /// Resumes detection after `pause(reason:)`.
        public func resume() {
            pauseState.withLock { $0 = nil }
            paused.value.store(false, ordering: .releasing)
        }

        /// The reason given to `pause(reason:)`, while paused.
        public var pauseReason: String? { pauseState.withLock { $0 } }

        /// Whether the watchdog thread runs.
        public var isRunning: Bool { thread.running.withLock { $0 != nil } }

        /// The watchdog's cost and counts so far.
        public var statistics: Statistics { statisticsBox.snapshot }
    }
}

/// The watchdog thread and the flag that ends it.
struct RunningThread: Sendable {
    var thread: pthread_t
    var stopFlag: WatchdogFlag
}

/// A flag the public object sets and the watchdog thread reads at every wake-up (stop, pause).
/// A class of its own so the thread never retains the `HangWatchdog`: dropping the last
/// reference still stops the thread through `deinit`.
final class WatchdogFlag: Sendable {
    let value = Atomic<Bool>(false)
}

/// A watchdog's thread and how to stop it: what the registry holds, so it needs no reference to
/// the public object (a weak one cost a side table that LeakSanitizer reported as leaked, since
/// the object's reference count points to it in an encoded form).
final class WatchdogThreadControl: Sendable {
    let running = Mutex<RunningThread?>(nil)

    /// Stops the thread and joins it (detaches it when called on that thread); idempotent.
    func stop() {
        guard
            let thread = running.withLock({ running -> RunningThread? in
                defer { running = nil }
                return running
            })
        else { return }
        WatchdogRegistry.remove(self)
        thread.stopFlag.value.store(true, ordering: .releasing)
        OwnThread.joinOrDetach(thread.thread)
    }
}

/// The running watchdogs' threads, so `Perf.shutdown()` can stop them (writing a hang in
/// progress) before the recording ends. A watchdog nobody holds still stops through `deinit`,
/// which removes its entry.
enum WatchdogRegistry {
    private static let entries = Mutex<[ObjectIdentifier: WatchdogThreadControl]>([:])

    static func add(_ control: WatchdogThreadControl) {
        entries.withLock { $0[ObjectIdentifier(control)] = control }
    }

    static func remove(_ control: WatchdogThreadControl) {
        _ = entries.withLock { $0.removeValue(forKey: ObjectIdentifier(control)) }
    }

    /// Stops every running watchdog and waits for each to write what it was measuring.
    static func stopAll() {
        let running = entries.withLock { entries -> [WatchdogThreadControl] in
            defer { entries.removeAll() }
            return Array(entries.values)
        }
        for control in running { control.stop() }
    }
}
