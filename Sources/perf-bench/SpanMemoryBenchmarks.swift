// The span memory group (issue 14): what moving span histograms and the flight recorder into a
// file mapped MAP_SHARED costs. Resident memory for 1,000 names × 32 threads against the layout
// before (SpanMemoryRSSBenchmarks.swift).
import Foundation

enum SpanMemoryBenchmarks {
    static let group = BenchGroup(name: "span-memory") { context in try run(context) }

    private static func run(_ context: BenchContext) throws {
        try SpanMemoryRSS.run(context)
    }
}
