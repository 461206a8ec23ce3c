// The knobs of a hang watchdog, with defaults chosen for detection error and idle cost (see below).

extension Perf.HangWatchdog {
    /// How often a watchdog pings its target, what counts as a hitch or a hang, and how it samples.
    ///
    /// The defaults come from measurements on a 2-core Linux host: a 50 ms interval brackets a hang
    /// within ±25 ms (a 120 ms hitch band needs pings no further apart than 60 ms) for about 0.25 %
    /// of one core while idle.
    ///
    /// ```swift
    /// var configuration = Perf.HangWatchdog.Configuration()
    /// configuration.fatalAfter = .seconds(20)
    /// configuration.onFatal = { episode in abort() }
    /// let watchdog = Perf.HangWatchdog(monitoring: .main, configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// Time between pings. Bounds are at most this far apart.
        public var interval: Duration = .milliseconds(50)
        /// A stall whose estimated duration reaches this is a hitch.
        public var hitchThreshold: Duration = .milliseconds(120)
        /// A stall whose estimated duration reaches this is a hang.
        public var hangThreshold: Duration = .milliseconds(250)
        /// Episodes that begin this soon after `start()` are not reported. None by default:
        /// detection starts at `start()`. Set one when start-up work blocks the target on purpose
        /// (a synchronous load right after `start()`), or start the watchdog after it.
        public var startupGrace: Duration = .zero
        /// How long a ping must be outstanding before the blocked thread's stack is first sampled.
        public var firstSampleAfter: Duration = .milliseconds(150)
        /// Time between further stack samples of the same episode.
        public var sampleInterval: Duration = .milliseconds(250)
        /// Most stack samples per episode. Frames present in every sample are the stuck frames.
        public var maxSamples: Int = 4
        /// How long a hang must last before it is reported as in progress (journalled, so a kill
        /// during the hang still leaves a record).
        public var ongoingAfter: Duration = .seconds(1)
        /// When set, a hang lasting this long calls `onFatal` once (for example to abort and get a
        /// crash report instead of a silent freeze).
        public var fatalAfter: Duration?
        /// Called on the watchdog's thread when a hang reaches `fatalAfter`.
        public var onFatal: (@Sendable (Episode) -> Void)?
        /// Marks every episode as suppressed (reason `debugger`) while a debugger is attached
        /// (`TracerPid` in `/proc/self/status`): breakpoints stop the process.
        public var suppressWhenDebugging: Bool = true
        /// An episode blamed on the same culprit within this time is counted but not a full record.
        public var culpritCooldown: Duration = .seconds(30)
        /// Called on the watchdog's thread with every finished episode, suppressed ones included.
        public var onEpisode: (@Sendable (Episode) -> Void)?
        /// When set, this watchdog feeds systemd's service watchdog (`WatchdogSec=`) with
        /// `WATCHDOG=1` while the target answers, and stops once a hang passes the link's limit so
        /// that systemd restarts the service. Off by default; see ``SystemdLink``.
        public var systemdWatchdog: SystemdLink?

        /// Creates a configuration with the defaults above.
        public init() {}
    }
}

extension Duration {
    /// Whole nanoseconds, clamped at zero: the watchdog's arithmetic is on `UInt64` nanoseconds.
    var watchdogNanos: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        return UInt64(seconds) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }
}
