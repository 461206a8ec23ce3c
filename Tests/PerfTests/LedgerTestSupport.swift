// Helpers shared by the ledger and privacy tests: a seeded RNG and throwaway directories.
import Foundation
import Testing

@testable import Perf

/// SplitMix64: tiny, fast and repeatable, so a failing fuzz run can be replayed from its seed.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A seed from the environment (`PERF_TEST_SEED`) to replay a failure, else a fresh one.
    static func makeSeed() -> UInt64 {
        if let text = ProcessInfo.processInfo.environment["PERF_TEST_SEED"], let seed = UInt64(text) { return seed }
        return UInt64.random(in: 0...UInt64.max)
    }
}

/// A fresh directory under the system's temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let url: URL

    init(_ label: String = "ledger") throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("perf-\(label)-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    var ledger: URL { url.appendingPathComponent(Perf.LedgerWriter.fileName) }
    var previous: URL { url.appendingPathComponent(Perf.LedgerWriter.previousFileName) }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

extension Perf.LedgerEvent {
    /// A typical over-budget span line.
    static func sampleSpan(sequence: Int = 0, session: String = "s-1") -> Perf.LedgerEvent {
        var event = Perf.LedgerEvent(kind: .span, name: "api.get", session: session, timestampMs: 1_796_216_400_123)
        event.durationMs = 1234.5
        event.budgetMs = 1000
        event.exit = "success"
        event.detail = "/v1/threads"
        event.count = sequence
        event.site = "MyService/API.swift:88"
        return event
    }
}

/// The raw lines of a file, split on `\n` (a torn tail is the last element, non-empty).
func ledgerLines(_ url: URL) -> [Data] {
    guard let data = try? Data(contentsOf: url) else { return [] }
    var lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { Data($0) }
    if lines.last?.isEmpty == true { lines.removeLast() }
    return lines
}

func fileSize(_ url: URL) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.intValue ?? 0
}
