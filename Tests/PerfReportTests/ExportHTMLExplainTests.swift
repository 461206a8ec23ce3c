// The html export's "where slow spans spent their time": the flame graph's layout from merged
// stacks, and the section for the profile fixture (children table, self time, top cause, SVG).
import Foundation
import Testing

@testable import Perf
@testable import PerfReport

@Suite struct ExportHTMLExplainTests {
    typealias F = SpanProfileFixture
    typealias Box = HTMLFlameGraph.Box

    @Test func stacksMergeRootFirstWithWidthsBySamples() {
        let graph = HTMLFlameGraph(stacks: [
            (frames: ["c", "b", "main"], count: 3),
            (frames: ["b", "main"], count: 1),
            (frames: ["d", "main"], count: 2),
            (frames: [], count: 4),
            (frames: ["x"], count: 0),
        ])
        #expect(graph.total == 10)
        #expect(graph.rows == 4)
        #expect(
            graph.boxes == [
                Box(name: "all samples", depth: 0, offset: 0, count: 10),
                Box(name: "main", depth: 1, offset: 0, count: 6),
                Box(name: "b", depth: 2, offset: 0, count: 4),
                Box(name: "c", depth: 3, offset: 0, count: 3),
                Box(name: "d", depth: 2, offset: 4, count: 2),
                Box(name: "other", depth: 1, offset: 6, count: 4),
            ])
    }

    @Test func deepStacksAreCutAndNoSamplesDrawNothing() {
        let deep = HTMLFlameGraph(stacks: [(frames: (0..<100).map { "f\($0)" }, count: 1)])
        #expect(deep.rows == HTMLFlameGraph.maximumDepth + 1)
        #expect(deep.boxes.last?.name == "f\(100 - HTMLFlameGraph.maximumDepth)", "the outermost frames are kept")
        let empty = HTMLFlameGraph(stacks: [])
        #expect(empty.total == 0 && empty.boxes.isEmpty && empty.rows == 0)
    }

    @Test func theFixturesPageExplainsApiGet() throws {
        let page = String(decoding: HTMLExport.render(try F.exportInput()), as: UTF8.self)
        let start = try #require(page.range(of: "<section id=\"why-slow\">"))
        let section = String(page[start.lowerBound...].prefix { _ in true })
            .components(separatedBy: "</section>")[0]
        #expect(section.contains("<h3>api.get</h3>"))
        #expect(
            section.contains(
                "2 slow lines; 70 samples every 10ms &#40;2 suspended, 1 missed). Top cause&#58; 64 % read&#40;fd 7 "))
        // The children table: db.query from the first line, then the time outside the children.
        #expect(section.contains("<td>db.query</td><td class=\"num\">3</td>"))
        #expect(section.contains("<i>self (outside its children)</i>"))
        // One flame graph: the root, then the frames outermost first.
        #expect(section.components(separatedBy: "<svg class=\"flame\"").count == 2)
        #expect(section.contains("<title>all samples&#58; 70 samples &#40;100.0 %)</title>"))
        #expect(section.contains("<title>__read&#58; 45 samples &#40;64.3 %)</title>"))
        #expect(section.contains("<title>other&#58; 3 samples &#40;4.3 %)</title>"))
        #expect(!section.contains("<h3>db.query</h3>"), "a line with neither children nor a profile is not explained")
        #expect(section.contains("width by samples)."), "the introduction is not cut")
        #expect(!page.contains("<script"))
    }

    @Test func aReportWithoutChildrenOrProfilesHasNoSection() throws {
        let page = String(decoding: HTMLExport.render(try ExportFixture.input()), as: UTF8.self)
        #expect(!page.contains("why-slow"))
    }
}
