// The 2 MiB cap on a 50 MB data directory: the report stays under it and `truncated` says what
// the cap left out.
import Foundation
import PerfReport
import PerfTestSupport
import Testing

@testable import Perf

@Suite struct ReportCapTests {
    /// Writes `megabytes` of ledger (half in `.prev`) and payloads; returns the line count.
    static func generate(in directory: URL, ledgerMegabytes: Int, payloads: Int, spanNames: Int) throws -> Int {
        var lines = 0
        for file in [LedgerWriter.previousFileName, LedgerWriter.fileName] {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(ledgerMegabytes << 19)
            while bytes.count < ledgerMegabytes << 19 {
                var event = LedgerEvent(
                    kind: .span, name: "span.\(lines % spanNames)", session: "s\(lines / 50_000)",
                    timestampMs: 1_796_216_400_000 + Int64(lines))
                event.durationMs = Double(lines % 977) + 0.5
                event.budgetMs = 100
                event.exit = "success"
                event.site = "Big/File.swift:\(lines % 13)"
                LedgerEncoder.encodeLine(event, into: &bytes)
                lines += 1
            }
            try Data(bytes).write(to: directory.appendingPathComponent(file))
        }
        let folder = directory.appendingPathComponent(DiagnosticFiles.directoryName)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var spans: [String: Perf.Histogram] = [:]
        for index in 0..<spanNames {
            var histogram = Perf.Histogram()
            for value in 0..<20 { histogram.record(nanos: UInt64((index + 1) * 1000 + value * 7919)) }
            spans["span.\(index)"] = histogram
        }
        // Eight sessions' payloads, each filed under many times: encoding is the slow part.
        let encoded = (0..<8).map { session in
            Data(
                DiagnosticSnapshot(
                    session: "s\(session)", takenAtMs: 1_796_216_400_000 + Int64(session), reason: "periodic",
                    app: Perf.AppInfo(name: "big"), host: .current(), process: .current(), spans: spans, hangs: [:]
                ).jsonBytes)
        }
        for index in 0..<payloads {
            let name = DiagnosticFiles.fileName(
                takenAtMs: 1_796_216_400_000 + Int64(index) * 1000, session: "s\(index % 8)")
            try encoded[index % 8].write(to: folder.appendingPathComponent(name))
        }
        return lines
    }

    @Test func aFiftyMegabyteDirectoryGivesACappedReportThatSaysWhatItLeftOut() throws {
        let directory = try TemporaryDirectory("report-cap")
        defer { directory.remove() }
        let lines = try Self.generate(in: directory.url, ledgerMegabytes: 20, payloads: 80, spanNames: 2000)
        let total = try FileManager.default.subpathsOfDirectory(atPath: directory.url.path).reduce(0) {
            $0
                + ((try? FileManager.default.attributesOfItem(atPath: directory.url.path + "/" + $1)[.size] as? Int)
                    ?? 0)
        }
        #expect(total >= 50_000_000)
        var progress: [String] = []
        let cap = 2 * 1024 * 1024
        let bytes = try ReportBuilder(directory: directory.url, capBytes: cap).build { progress.append($0) }
        #expect(bytes.count <= cap)
        #expect(bytes.count > cap - 64 * 1024, "the cap should be used, not wasted")
        #expect(!progress.isEmpty, "a large directory reports progress")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        let truncated = try #require(report["truncated"] as? [String: Any])
        let ledger = try #require(report["ledger"] as? [String: Any])
        let kept = try #require(ledger["events"] as? [Any]).count
        #expect(truncated["ledgerEventsOmitted"] as? Int == lines - kept)
        #expect((truncated["diagnosticsOmitted"] as? Int ?? 0) > 0)
        _ = try PerformanceReport(bytes: bytes, path: "capped.json")
    }
}
