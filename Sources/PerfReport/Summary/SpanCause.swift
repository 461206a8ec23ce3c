// A slow span name's top cause: of every sample its profiled ledger lines hold, the (wait,
// culprit) pair found most often: what `perf-report summary` prints under the name's row.
import Perf
import PerfCore

/// The wait and frame a span name's sampled time went to most, over all its profiled lines.
///
/// A blocked sample's cause is its wait and the program's innermost frame
/// (`74 % read(fd 7 → socket 127.0.0.1:5432) in App.Store.load(id:)`); a running one's is its
/// frame alone (`61 % running in App.parse(_:)`). The entry a profile folds its rarer stacks
/// into (`other`) counts among the samples but is never the cause.
public struct SpanCause: Sendable, Equatable {
    /// What the thread was blocked in; `nil` when it was running.
    public var wait: String?
    /// The program's innermost frame; `nil` when no frame of the program was on the stack.
    public var culprit: String?
    /// Samples with this wait and culprit.
    public var samples: Int64
    /// Samples of every profiled line of the name.
    public var totalSamples: Int64

    /// Creates a cause.
    public init(wait: String?, culprit: String?, samples: Int64, totalSamples: Int64) {
        self.wait = wait
        self.culprit = culprit
        self.samples = samples
        self.totalSamples = totalSamples
    }

    /// The share of the samples, in whole percent.
    public var percent: Int {
        guard totalSamples > 0 else { return 0 }
        return Int((Double(samples) / Double(totalSamples) * 100).rounded())
    }

    /// `read(fd 7 → socket 127.0.0.1:5432) in App.Store.load(id:)`, `running in App.parse(_:)`;
    /// without a culprit, the wait alone or `running outside the program's own code`.
    public var description: String {
        let frame = culprit.map(FunctionName.readable)
        switch (wait, frame) {
        case (let wait?, let frame?): return "\(wait) in \(frame)"
        case (let wait?, nil): return wait
        case (nil, let frame?): return "running in \(frame)"
        case (nil, nil): return "running outside the program's own code"
        }
    }

    /// `74 % read(…) in App.Store.load(id:) (37 of 50 samples)`.
    public var text: String {
        "\(percent) % \(description) (\(samples) of \(totalSamples) sample\(totalSamples == 1 ? "" : "s"))"
    }

    /// The top cause of each span name whose ledger lines hold a readable profile with samples.
    public static func top(of events: [PerformanceReport.Event]) -> [String: SpanCause] {
        var profiles: [String: [SpanProfile]] = [:]
        for event in events where event.kind == .span {
            if let profile = event.profile { profiles[event.name, default: []].append(profile) }
        }
        return profiles.compactMapValues(cause(of:))
    }

    /// The top cause over `profiles` (one span name's); `nil` when they hold no sample outside
    /// the folded `other` entries. Ties go to the pair that sorts first (wait, then culprit), so
    /// the choice is repeatable.
    public static func cause(of profiles: [SpanProfile]) -> SpanCause? {
        struct Pair: Hashable {
            var wait: String?
            var culprit: String?
        }
        var total: Int64 = 0
        var pairs: [Pair: Int64] = [:]
        for profile in profiles {
            for stack in profile.top where stack.count > 0 {
                let count = Int64(stack.count)
                total = add(total, count)
                if stack.culprit == SpanProfile.otherName, stack.frames.isEmpty { continue }
                let pair = Pair(wait: stack.wait, culprit: stack.culprit)
                pairs[pair] = add(pairs[pair] ?? 0, count)
            }
        }
        let best = pairs.min { lhs, rhs in
            if lhs.value != rhs.value { return lhs.value > rhs.value }
            return (lhs.key.wait ?? "", lhs.key.culprit ?? "") < (rhs.key.wait ?? "", rhs.key.culprit ?? "")
        }
        guard let best, total > 0 else { return nil }
        return SpanCause(wait: best.key.wait, culprit: best.key.culprit, samples: best.value, totalSamples: total)
    }

    /// A sum that stops at `Int64.max` rather than trap on a fabricated report's counts.
    private static func add(_ lhs: Int64, _ rhs: Int64) -> Int64 {
        let (sum, overflow) = lhs.addingReportingOverflow(rhs)
        return overflow ? .max : sum
    }
}
