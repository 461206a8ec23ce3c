// The html export's limits and scales: the recent window, the rect cap, the lane cap, nesting
// rows, axis ticks, the histogram's log axis and the duration notation.
import Foundation
import Testing

@testable import Perf
@testable import PerfReport

@Suite struct ExportHTMLLayoutTests {
    /// A report holding one session's flight recorder: `(tid, startNs, durationNs)` per span.
    static func input(_ spans: [(Int64, Int64, Int64)], budgetMs: Double? = nil) throws -> ExportInput {
        var text = #"{"schema":"perf-report","schemaVersion":1,"sessions":[{"id":"s1","status":"active"}],"#
        text += #""spans":{},"intervals":[{"session":"s1","epochUnixMs":1796216400000,"threads":[],"spans":["#
        text += spans.map { tid, start, duration in
            #"{"name":"work","tid":\#(tid),"startNs":\#(start),"durationNs":\#(duration)"#
                + (budgetMs.map { #","budgetMs":\#($0)}"# } ?? "}")
        }.joined(separator: ",")
        text += "]}]}"
        return try ExportInput(bytes: Array(text.utf8), path: "layout.json")
    }

    @Test func longRecordingsShowTheMostRecentWindowAndSayWhatIsLeftOut() throws {
        // One span a second for ten minutes.
        let input = try Self.input((0..<600).map { (7, Int64($0) * 1_000_000_000, 5_000_000) })
        let block = try #require(HTMLTimelineLayout(input).blocks.first)
        #expect(block.windowEnd - block.windowStart == HTMLTimelineLayout.maximumWindowNanos)
        let drawn = block.lanes.flatMap(\.spans)
        #expect(drawn.count == 121 && block.olderThanWindow == 479, "the span ending as the window starts is kept")
        #expect(drawn.allSatisfy { HTMLTimelineLayout.end($0.interval) >= block.windowStart })
        let timeline = HTMLStructure.section(
            "timeline", in: String(decoding: HTMLExport.render(input), as: UTF8.self))
        #expect(timeline.contains("showing the most recent 2m of 9m 59s; 479 earlier spans not drawn."))
        #expect(HTMLStructure.occurrences(of: "<rect class=\"span", in: timeline) == 121)
    }

    @Test func pagesDrawAtMostTheRectCapAndKeepTheNewest() throws {
        let total = HTMLTimelineLayout.maximumSpanRects + 5_000
        let input = try Self.input((0..<total).map { (Int64(7 + $0 % 3), Int64($0) * 2_000_000, 1_000_000) })
        let layout = HTMLTimelineLayout(input)
        #expect(layout.drawnSpans == HTMLTimelineLayout.maximumSpanRects)
        #expect(layout.overRectCap == 5_000)
        let oldestDrawn = layout.blocks.flatMap { $0.lanes.flatMap(\.spans) }.map(\.interval.startUnixNanos).min()
        #expect(oldestDrawn == input.intervals[5_000].startUnixNanos)
        let page = String(decoding: HTMLExport.render(input), as: UTF8.self)
        #expect(HTMLStructure.occurrences(of: "<rect class=\"span", in: page) == HTMLTimelineLayout.maximumSpanRects)
        #expect(page.contains("5,000 older spans not drawn; the page draws at most 20,000 spans."))
        #expect(page.utf8.count < 4_000_000, "page is \(page.utf8.count) bytes")
    }

    @Test func busiestThreadsGetLanesAndTheRestAreCounted() throws {
        // Thread t has t + 1 spans, so the quietest twelve are left out.
        let spans = (0..<60).flatMap { tid in (0...tid).map { (Int64(tid), Int64($0) * 1_000_000, Int64(500_000)) } }
        let block = try #require(HTMLTimelineLayout(try Self.input(spans)).blocks.first)
        #expect(block.lanes.count == HTMLTimelineLayout.maximumLanes)
        #expect(block.lanes.compactMap(\.threadID) == Array(12..<60))
        #expect(block.hiddenLanes == 12 && block.spansOnHiddenLanes == (1...12).reduce(0, +))
        #expect(block.lanes.first?.name == "thread 12", "a thread without a recorded name is named by its tid")
    }

    @Test func nestedSpansStackInRowsUpToTheCap() throws {
        let ms: Int64 = 1_000_000
        let input = try Self.input([
            (1, 0, 100 * ms), (1, 10 * ms, 50 * ms), (1, 20 * ms, 10 * ms), (1, 21 * ms, 5 * ms), (1, 22 * ms, 1 * ms),
            (1, 200 * ms, 10 * ms),
        ])
        let rows = HTMLTimelineLayout.placeRows(input.intervals).map(\.row)
        #expect(rows == [0, 1, 2, 3, 3, 0])
        #expect(HTMLTimelineLayout(input).blocks.first?.lanes.first?.rows == HTMLTimelineLayout.maximumRows)
    }

    @Test(arguments: [1_000 as Int64, 942_442_000, 1_000_000_000, 7_300_000_000, 120_000_000_000])
    func axisTicksAreRoundAndReadable(windowNanos: Int64) {
        let ticks = HTMLExport.axisTicks(windowNanos: windowNanos)
        #expect((5...9).contains(ticks.count), "\(ticks.count) ticks for \(windowNanos) ns")
        #expect(ticks.first?.1 == "0" && ticks.allSatisfy { $0.0 <= windowNanos })
        let step = ticks[1].0
        let leading = String(step).prefix { $0 != "0" }
        #expect(["1", "2", "5"].contains(leading), "step \(step)")
        for (offset, label) in ticks.dropFirst() {
            // `+1m 20s` past a minute; `+200ns` below a microsecond; otherwise the budgets file's
            // notation, within rounding.
            let text = String(label.dropFirst())
            let parsed =
                text.hasSuffix("ns")
                ? Double(text.dropLast(2)).map { $0 / 1e6 } : BudgetQuantity(parsing: text)?.value
            #expect(
                parsed.map { abs($0 * 1e6 - Double(offset)) <= Double(offset) * 0.01 } ?? (offset >= 60_000_000_000))
        }
    }

    @Test func histogramAxisIsLogarithmicAndAtLeastADecade() {
        let axis = HTMLExport.LogAxis(minNanos: 2_000_000, maxNanos: 3_000_000, budgetNanos: nil)
        #expect(axis.upperNanos / axis.lowerNanos >= 9.999)
        #expect(abs(axis.x(axis.lowerNanos) - 10) < 1e-9 && abs(axis.x(axis.upperNanos) - 390) < 1e-9)
        let middle = (axis.lowerNanos * axis.upperNanos).squareRoot()
        #expect(abs(axis.x(middle) - 200) < 1e-6, "the geometric mean sits in the middle")
        let withBudget = HTMLExport.LogAxis(minNanos: 2_000_000, maxNanos: 3_000_000, budgetNanos: 250_000_000)
        #expect(withBudget.upperNanos > 250_000_000, "the budget line always fits on the axis")
        #expect(withBudget.bin(0) == 0 && withBudget.bin(1e300) == HTMLExport.HistogramGeometry.bins - 1)
    }

    @Test(arguments: [
        (0.0, "0ms"), (0.8304, "830µs"), (0.000_5, "500ns"), (0.000_025, "25ns"), (0.001, "1µs"), (4.047, "4.05ms"),
        (12.5, "12.5ms"), (712.5, "712ms"),
        (999.7, "1s"), (1520, "1.52s"), (605_000, "10m 5s"), (600_000, "10m"), (7_500_000, "2h 5m"), (-3, "-3ms"),
        (1e300, "277777777777h 46m"), (.infinity, "–"),
    ])
    func durationsHaveThreeSignificantDigits(ms: Double, text: String) {
        #expect(HTMLExport.duration(ms: ms) == text)
    }

    @Test func escapingLeavesPlainTextAloneAndNeutralisesMarkup() {
        #expect(HTMLWriter.escape("api.get /v1/threads") == "api.get /v1/threads")
        #expect(HTMLWriter.escape("a<b>&\"'") == "a&lt;b&gt;&amp;&quot;&apos;")
        #expect(HTMLWriter.escape("https://x (y=1) @z") == "https&#58;//x &#40;y&#61;1) &#64;z")
        #expect(HTMLWriter.clipped(String(repeating: "é", count: 500), 10) == String(repeating: "é", count: 9) + "…")
        #expect(HTMLWriter.number(12.25) == "12.3" || HTMLWriter.number(12.25) == "12.2")
        #expect(HTMLWriter.number(-0.04) == "0" && HTMLWriter.number(.nan) == "0" && HTMLWriter.number(3) == "3")
    }
}
