// PLACEHOLDER: replaced by the Span work with real benchmarks.
enum SpanBenchmarks {
    static let group = BenchGroup(name: "span") { _ in }
}
