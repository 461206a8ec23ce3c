// PLACEHOLDER: replaced by the Ledger work with real benchmarks.
enum LedgerBenchmarks {
    static let group = BenchGroup(name: "ledger") { _ in }
}
