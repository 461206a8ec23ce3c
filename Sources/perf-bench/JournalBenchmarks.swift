// PLACEHOLDER: replaced by the Journal work with real benchmarks.
enum JournalBenchmarks {
    static let group = BenchGroup(name: "journal") { _ in }
}
