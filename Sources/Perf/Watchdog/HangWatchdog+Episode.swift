// One hitch or hang as a watchdog reports it: bounds, the thread, its stack and its culprit.

extension Perf.HangWatchdog {
    /// A period during which the target did not answer a ping in time.
    ///
    /// The duration is bracketed: `lowerMs` runs from the late ping's send to its service (the
    /// target did not answer for that long), `upperMs` from the last answered ping to the service.
    /// Both are as observed. `durationMs`, which decides the kind, is their midpoint with the
    /// watchdog's own stall removed from each: time during which the watchdog itself could not
    /// run (process stopped, debugger, starved host) is not blamed on the target, so `durationMs`
    /// can fall below `lowerMs` by up to `stallMs`.
    public struct Episode: Sendable {
        /// Hitch or hang.
        public enum Kind: String, Sendable, Equatable {
            /// Estimated duration in [hitch threshold, hang threshold).
            case hitch
            /// Estimated duration at or above the hang threshold.
            case hang
        }

        /// Why an episode is not blamed on the target.
        public enum SuppressionReason: String, Sendable, Equatable {
            /// The whole process stopped (SIGSTOP, job control): the watchdog woke at least 500 ms
            /// late and, without that stall, the ping was answered in time.
            case stopped
            /// A debugger was attached (`TracerPid` non-zero).
            case debugger
            /// The host was suspended (CLOCK_BOOTTIME − CLOCK_MONOTONIC grew).
            case suspend
            /// The watchdog thread was starved of CPU in many short delays.
            case starved
        }

        /// Process-unique id, shared with the in-progress reports of the same episode.
        public var id: UInt64
        /// The monitored target's name.
        public var targetName: String
        /// Hitch or hang. For a suppressed episode, what it would have been without the stall.
        public var kind: Kind
        /// Late ping sent → answered, as observed.
        public var lowerMs: Double
        /// Last answered ping → late ping answered, as observed.
        public var upperMs: Double
        /// The estimate: midpoint of the bounds minus the watchdog's own stall.
        public var durationMs: Double
        /// How long the watchdog itself was stalled during the episode.
        public var stallMs: Double
        /// Why the episode is not blamed on the target, or `nil`.
        public var suppressed: SuppressionReason?
        /// The hang reached `fatalAfter`.
        public var fatal: Bool
        /// Reported while the hang is still going on (`hangOngoing`); the bounds are provisional.
        public var inProgress: Bool
        /// The blocked thread, when it is known.
        public var thread: ThreadInfo?
        /// What the blocked thread waited for, when its last sample found it blocked in a system
        /// call (read without a signal: the call, its file descriptor or timeout, a lock's owner).
        public var wait: Wait?
        /// The blocked thread's stack (innermost first) from its last sample.
        public var stack: [Frame]
        /// Frames present in every sample of the episode, innermost first.
        public var stuckFrames: [Frame]
        /// The innermost stuck frame outside the Swift runtime, Dispatch, Foundation and libc.
        public var culprit: Frame?
        /// How complete the stack is.
        public var stackQuality: StackQuality
        /// Stack samples taken during the episode.
        public var samplesTaken: Int
        /// `false` when the same culprit had a full record within the cooldown: count it, but a
        /// ledger may omit the stack.
        public var isFullRecord: Bool
        /// Wall-clock nanoseconds since the Unix epoch when the late ping was sent.
        public var startedWallNanos: UInt64
    }

    /// The thread that served the late ping, as `/proc/self/task/<tid>` described it while blocked.
    public struct ThreadInfo: Sendable, Equatable {
        /// Kernel thread id.
        public var tid: Int32
        /// The thread's name (`comm`).
        public var name: String
        /// Scheduler state letter at the last sample (`R` running, `S` sleeping, `D` disk wait…).
        public var state: String?
        /// Kernel function the thread waited in at the last sample (`wchan`), when readable.
        public var waitChannel: String?
    }

    /// What a thread blocked in a system call waits for, from `/proc/self/task/<tid>/syscall`.
    public struct Wait: Sendable, Equatable, CustomStringConvertible {
        /// The system call: `clock_nanosleep`, `futex`, `read`, `poll`, `epoll_wait`…
        public var call: String
        /// What it waits on, in words: `600 ms`, `fd 7 → pipe:[123]`, `pthread mutex held by tid 12`.
        public var on: String?
        /// For a lock another thread holds: that thread.
        public var owner: ThreadInfo?
        /// The holder's own culprit, when its stack could be read without a signal.
        public var ownerCulprit: String?

        /// `call(on)`, then the holder's culprit: `futex(pthread mutex held by db (tid 12)) ← Store.save()`.
        public var description: String {
            var text = on.map { "\(call)(\($0))" } ?? call
            if let ownerCulprit { text += " ← holder in \(ownerCulprit)" }
            return text
        }
    }

    /// One symbolicated stack frame.
    public struct Frame: Sendable, Hashable, CustomStringConvertible {
        /// The instruction address (a return address for every frame but the innermost).
        public var address: UInt
        /// The demangled function name, when the image's symbol tables name it.
        public var symbol: String?
        /// Offset of `address` from the start of the function.
        public var offset: UInt
        /// Path of the executable or shared library holding the frame.
        public var image: String
        /// Frames of the Swift runtime, Dispatch, Foundation, libc: never the culprit.
        var isSystem: Bool

        /// `symbol + offset (image)`, or the address when no symbol is known.
        public var description: String {
            let imageName = image.split(separator: "/").last.map(String.init) ?? image
            guard let symbol else { return "0x\(String(address, radix: 16)) (\(imageName))" }
            return "\(symbol) + \(offset) (\(imageName))"
        }
    }

    /// How complete an episode's stack is.
    public enum StackQuality: Sendable, Equatable {
        /// Every sample of the blocked thread succeeded and its stack reaches the program's own
        /// code (so it names a culprit).
        case full
        /// Some samples failed or were truncated, or the stack holds no frame of the program's
        /// code (it stops in the runtime or a library); what it holds is still reported.
        case partial(reason: String)
        /// No stack: the reason says why.
        case unavailable(reason: String)
    }
}
