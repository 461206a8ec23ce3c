// Helpers shared by the ledger and privacy tests: the ledger files of a temporary directory,
// sample events and raw lines.
import Foundation
import PerfTestSupport
import Testing

@testable import Perf

extension TemporaryDirectory {
    var ledger: URL { url.appendingPathComponent(LedgerWriter.fileName) }
    var previous: URL { url.appendingPathComponent(LedgerWriter.previousFileName) }
}

extension LedgerEvent {
    /// A typical over-budget span line.
    static func sampleSpan(sequence: Int = 0, session: String = "s-1") -> LedgerEvent {
        var event = LedgerEvent(kind: .span, name: "api.get", session: session, timestampMs: 1_796_216_400_123)
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
