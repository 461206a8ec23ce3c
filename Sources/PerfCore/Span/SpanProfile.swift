// What the span sampler saw of one span while it was over budget: the samples of its thread,
// folded by stack, with the wait each blocked sample was in.

/// The samples of one over-budget span's thread, taken every `intervalMs` from the moment it
/// passed its budget until it ended: the `profile` of its ledger line.
///
/// Every tick counts once: in ``samples`` (its stack was read), ``suspended`` (its task was
/// on no thread: awaiting) or ``missed`` (the read failed: the thread kept moving between
/// system calls, or answered no signal in time). ``top`` holds every sample: its counts add up
/// to ``samples``.
public struct SpanProfile: Sendable, Equatable {
    /// One folded stack and how many samples found it.
    public struct Stack: Sendable, Equatable {
        /// Samples with this stack (and wait).
        public var count: Int
        /// The program's innermost own frame (the watchdog's rule); `nil` when none was on the
        /// stack. ``SpanProfile/otherName`` for the entry that folds the stacks past the first
        /// eight.
        public var culprit: String?
        /// What the thread was blocked in, privacy-filtered (`read(fd 7 → socket 127.0.0.1:5432)`);
        /// `nil` for a running thread.
        public var wait: String?
        /// The frames, innermost first; empty for the `other` entry.
        public var frames: [String]

        public init(count: Int, culprit: String?, wait: String?, frames: [String]) {
            self.count = count
            self.culprit = culprit
            self.wait = wait
            self.frames = frames
        }
    }

    /// The entries a profile lists before it folds the rest into `other`.
    public static let stacksKept = 8
    /// The culprit of the entry that folds the stacks past the first eight.
    public static let otherName = "other"

    /// Samples whose stack was read.
    public var samples: Int
    /// Ticks at which the span's task was suspended (on no thread); never sampled.
    public var suspended: Int
    /// Ticks whose sample failed.
    public var missed: Int
    /// Milliseconds between two samples.
    public var intervalMs: Double
    /// Sampling stopped at the configured maximum before the span ended.
    public var capped: Bool
    /// The stacks, most samples first: at most ``stacksKept`` and one ``otherName`` entry.
    public var top: [Stack]
    /// Spans open inside this one at the last sample, outermost first: what an orphan was doing
    /// when its process died.
    public var open: [String]

    public init(
        samples: Int = 0, suspended: Int = 0, missed: Int = 0, intervalMs: Double, capped: Bool = false,
        top: [Stack] = [], open: [String] = []
    ) {
        self.samples = samples
        self.suspended = suspended
        self.missed = missed
        self.intervalMs = intervalMs
        self.capped = capped
        self.top = top
        self.open = open
    }

    /// Ticks counted, whatever they found.
    public var ticks: Int { samples + suspended + missed }
}

/// Where a span's end finds the profile the sampler took of it.
public protocol SpanProfileSource: Sendable {
    /// The profile of the span that began at `startNanos` and was given profile slot `ref`, taken
    /// out of the slot (`nil` when the slot holds another span's, or none).
    func take(_ ref: UInt64, startNanos: UInt64) -> SpanProfile?
}
