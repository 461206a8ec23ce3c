// Thousands of mutated ledgers, payloads and reports: building and summarising either succeed or
// throw a ReportError, never trap. Seeded; the seed is printed on failure (PERF_TEST_SEED replays).
import Foundation
import PerfTestSupport
import Testing

@testable import Perf
@testable import PerfReport

@Suite struct ReportFuzzTests {
    /// Flips, deletes, duplicates and inserts bytes.
    static func mutate(_ input: [UInt8], using random: inout SeededRandom) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...8, using: &random) {
            guard !bytes.isEmpty else { return [UInt8.random(in: 0...255, using: &random)] }
            let index = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<5, using: &random) {
            case 0: bytes[index] = UInt8.random(in: 0...255, using: &random)
            case 1: bytes.remove(at: index)
            case 2: bytes.insert(contentsOf: bytes[index..<min(bytes.count, index + 16)], at: index)
            case 3: bytes.insert(Array("{}[]\",:\n0-e9".utf8).randomElement(using: &random)!, at: index)
            default: bytes.removeSubrange(index..<bytes.count)
            }
        }
        return bytes
    }

    @Test func mutatedLedgersAndPayloadsNeverCrashTheBuilder() throws {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        let copy = try ReportFixture.copy()
        defer { copy.remove() }
        let ledgerURL = copy.file(LedgerWriter.fileName)
        let ledger = try [UInt8](Data(contentsOf: ledgerURL))
        let payloadURL = copy.url.appendingPathComponent("perf-diagnostics/20261202T131000000Z-b2b2b2b2b2b2b2b2.json")
        let payload = try [UInt8](Data(contentsOf: payloadURL))
        var built = 0
        for _ in 0..<1_500 {
            try Data(Self.mutate(ledger, using: &random)).write(to: ledgerURL)
            try Data(Self.mutate(payload, using: &random)).write(to: payloadURL)
            do {
                let bytes = try ReportBuilder(directory: copy.url).build()
                // Whatever went in, what comes out is a report the summary accepts.
                _ = try ReportSummary(bytes: bytes, path: "fuzz.json")
                built += 1
            } catch {
                #expect(error.code == .invalidLedger, "unexpected \(error) (seed \(seed))")
            }
        }
        #expect(built > 0, "seed \(seed)")
    }

    @Test func mutatedReportsNeverCrashTheSummary() throws {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        let report = try [UInt8](Data(contentsOf: ReportFixture.golden))
        var rejected = 0
        for _ in 0..<3_000 {
            do {
                let summary = try ReportSummary(bytes: Self.mutate(report, using: &random), path: "fuzz.json")
                _ = summary.text
                _ = summary.json
            } catch {
                rejected += 1
            }
        }
        #expect(rejected > 0, "seed \(seed)")
    }
}
