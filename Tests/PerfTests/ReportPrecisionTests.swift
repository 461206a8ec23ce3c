// Sub-millisecond figures keep their precision: a 25 ns span is 0.000025 ms in the report, not
// 0 (the figures used to be rounded to the microsecond).
import Foundation
import PerfTestSupport
import Testing

@testable import Perf

@Suite struct ReportPrecisionTests {
    @Test(arguments: [
        (UInt64(0), "0"), (25, "0.000025"), (512, "0.000512"), (1_000, "0.001"), (1_000_000, "1"),
        (20_000_000, "20"), (100_139_343, "100.139343"), (1_000_001, "1.000001"), (1_500_000, "1.5"),
        (UInt64.max, "18446744073709.551615"),
    ])
    func millisecondsAreExactToTheNanosecondInPlainDecimals(nanos: UInt64, text: String) throws {
        let bytes = ReportJSON.ms(nanos: nanos).bytes
        #expect(String(decoding: bytes, as: UTF8.self) == text)
        // A JSON reader gets the number back (Foundation's parser may be one ulp off near 2^64 ns).
        let parsed = try #require(
            try JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed) as? Double)
        let expected = try #require(Double(text))
        #expect(abs(parsed - expected) <= expected.ulp)
    }

    @Test func aTwentyFiveNanosecondSpanIsNotZero() throws {
        var calls = Perf.Histogram()
        for _ in 0..<100 { calls.record(nanos: 25) }
        let snapshot = DiagnosticSnapshot(
            session: SourcingFixture.survivor, takenAtMs: SourcingFixture.t0, reason: "periodic",
            app: Perf.AppInfo(name: "app"), host: .current(), process: ProcessFigures(), spans: ["tiny": calls],
            hangs: [:])
        let report = try SourcingFixture.report(lines: [], snapshots: [snapshot])
        let span = try #require(report.spans["tiny"])
        #expect(span.maxMs == 0.000025 && span.minMs == 0.000025)
        #expect(abs(span.p50Ms - 0.000025) <= 0.000025 * 0.01, "within the histogram's 1 %")
        #expect(span.p99Ms > 0 && span.sumMs == 0.0025)
    }

    @Test func ledgerDurationsConvertWithoutLosingANanosecond() {
        #expect(ReportLimits.nanos(ms: 1.001) == 1_001_000)
        #expect(ReportLimits.nanos(ms: 0.000025) == 25)
        #expect(ReportLimits.nanos(ms: -1) == 0 && ReportLimits.nanos(ms: .nan) == 0)
    }
}
