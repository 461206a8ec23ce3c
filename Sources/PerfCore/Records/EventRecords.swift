// Payloads of the records that are not spans: notes, hangs and session events.

/// A noteworthy event, rate-limited per name by the facade.
public struct NoteRecord: Sendable, Equatable {
    /// The note's name.
    public var name: String
    /// Optional detail (privacy-filtered by the facade).
    public var detail: String?
    /// How many notes of this name the rate limit suppressed since the last one recorded.
    public var suppressedCount: Int
    /// When it happened, nanoseconds since the Unix epoch.
    public var wallNanos: UInt64

    /// Creates a note record.
    public init(name: String, detail: String? = nil, suppressedCount: Int = 0, wallNanos: UInt64) {
        self.name = name
        self.detail = detail
        self.suppressedCount = suppressedCount
        self.wallNanos = wallNanos
    }
}

/// A stall of a monitored thread or queue, as the hang watchdog measured it.
///
/// The bounds bracket the true stall: `lowerMs` from the ping being sent to it being served,
/// `upperMs` from the last ping served idle to this one being served.
public struct HangRecord: Sendable, Equatable {
    /// A hang (past the hang threshold) or a shorter hitch.
    public enum Kind: String, Sendable, CaseIterable {
        /// Past the hang threshold (250 ms by default).
        case hang
        /// Past the hitch threshold but under the hang threshold.
        case hitch
    }

    /// Hang or hitch.
    public var kind: Kind
    /// Lower bound of the stall, milliseconds.
    public var lowerMs: Double
    /// Upper bound of the stall, milliseconds.
    public var upperMs: Double
    /// The stall the episode was classified on (midpoint minus the watchdog's own lateness).
    public var stallMs: Double
    /// True when the process died during the hang (reported by crash recovery).
    public var fatal: Bool
    /// Why the episode is not blamed on the target (a pause reason, a stopped process), if so.
    public var suppressed: String?
    /// The blocked thread's name or id.
    public var thread: String
    /// Symbolicated frames of the blocked thread.
    public var stack: [String]
    /// Frames present in every sample of the episode: where the thread was stuck.
    public var stuckFrames: [String]
    /// The frame judged responsible, if one stands out.
    public var culprit: String?
    /// The monitored target (`main`, a queue label, a custom name).
    public var targetName: String
    /// When the episode ended (or was last seen), nanoseconds since the Unix epoch.
    public var wallNanos: UInt64
    /// The classified duration (midpoint of the bounds minus the watchdog's own lateness), when
    /// the detector computed one.
    public var durationMs: Double?
    /// How complete `stack` is: `full`, `partial: …` or `unavailable: …`.
    public var stackQuality: String?
    /// What the blocked thread waited for, when it was blocked in a system call
    /// (`clock_nanosleep(600 ms)`, `read(fd 7 → pipe 123)`, `futex(pthread mutex held by …)`),
    /// privacy-filtered by the facade.
    public var wait: String?
    /// The episode was still going on when it was written (the watchdog stopped or paused, or
    /// Perf shut down, during it): the bounds are lower bounds.
    public var inProgress: Bool

    /// Creates a hang record.
    public init(
        kind: Kind, lowerMs: Double, upperMs: Double, stallMs: Double, fatal: Bool = false,
        suppressed: String? = nil, thread: String, stack: [String] = [], stuckFrames: [String] = [],
        culprit: String? = nil, targetName: String, wallNanos: UInt64, durationMs: Double? = nil,
        stackQuality: String? = nil, wait: String? = nil, inProgress: Bool = false
    ) {
        self.kind = kind
        self.lowerMs = lowerMs
        self.upperMs = upperMs
        self.stallMs = stallMs
        self.fatal = fatal
        self.suppressed = suppressed
        self.thread = thread
        self.stack = stack
        self.stuckFrames = stuckFrames
        self.culprit = culprit
        self.targetName = targetName
        self.wallNanos = wallNanos
        self.durationMs = durationMs
        self.stackQuality = stackQuality
        self.wait = wait
        self.inProgress = inProgress
    }
}

/// A session's lifecycle event.
public struct SessionEventRecord: Sendable, Equatable {
    /// What happened to the session.
    public enum Event: String, Sendable, CaseIterable {
        /// The session began (at install).
        case start
        /// The session ended cleanly (at shutdown).
        case end
        /// A prior session was found without an end marker.
        case crashed
    }

    /// The session's id.
    public var sessionID: String
    /// What happened.
    public var event: Event
    /// A recovery note: what the journal could not preserve, for a crashed session.
    public var note: String?
    /// When it happened (or, for `crashed`, when it was last known alive), Unix epoch nanoseconds.
    public var wallNanos: UInt64

    /// Creates a session event record.
    public init(sessionID: String, event: Event, note: String? = nil, wallNanos: UInt64) {
        self.sessionID = sessionID
        self.event = event
        self.note = note
        self.wallNanos = wallNanos
    }
}
