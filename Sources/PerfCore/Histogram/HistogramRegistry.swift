// PLACEHOLDER owned by the histogram work: replaced wholesale, signatures kept.
/// A latency histogram (placeholder).
public struct LatencyHistogram: Sendable, Equatable {
    public init() {}
}

/// Per-name latency histograms, updated on every span end (placeholder).
public final class HistogramRegistry: Sendable {
    public init(capacity: Int = 1024) {}
    /// Hot path: ticks the histogram of a static name.
    public func record(_ name: StaticString, nanos: UInt64) {}
    /// Slow path for names only known at run time (hang targets, recovered spans).
    public func record(name: String, nanos: UInt64) {}
    /// A copy of every histogram, by name.
    public func snapshot() -> [String: LatencyHistogram] { [:] }
}
