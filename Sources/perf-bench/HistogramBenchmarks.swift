// PLACEHOLDER: replaced by the Histogram work with real benchmarks.
enum HistogramBenchmarks {
    static let group = BenchGroup(name: "histogram") { _ in }
}
