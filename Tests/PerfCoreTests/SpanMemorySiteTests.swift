// Each span name's entry keeps where its first span began, so a report can name the call site of
// a span that never went over budget (it writes no ledger line); a reader of the file sees it too.
import Foundation
import PerfTestSupport
import Testing

@testable import PerfCore

@Suite struct SpanMemorySiteTests {
    @Test func theFirstRecordsSiteIsKeptAndReadBackFromTheFile() throws {
        let directory = try TemporaryDirectory("span-memory-sites")
        defer { directory.remove() }
        let path = directory.file("spans.map").path
        let memory = try SpanMemory.create(
            path: path, .init(bytes: 1 << 20, nameCapacity: 16, ringCapacity: 8),
            anchorMonotonicNanos: 1, anchorWallNanos: 1)
        defer { memory.close() }
        let registry = HistogramRegistry(memory: memory)
        registry.record("site.a", nanos: 100, site: CallSite(fileID: "App/Feed.swift", line: 12))
        // Later records of the name, from another site, do not replace the first one.
        registry.record("site.a", nanos: 200, site: CallSite(fileID: "App/Other.swift", line: 99))
        registry.record("site.b", nanos: 100)
        #expect(registry.sites() == ["site.a": ["App/Feed.swift:12"]], "a name recorded without a site has none")
        let read = try #require(try RecoveredSpanMemory.read(path: path))
        #expect(read.sites == ["site.a": ["App/Feed.swift:12"]])
        #expect(read.histograms["site.a"]?.count == 2)
    }

    @Test func aSiteWhoseBytesDoNotCheckOutIsLeftOutAndTheNameKept() throws {
        let memory = try SpanMemory.anonymous(.init(bytes: 1 << 20, nameCapacity: 4, ringCapacity: 0))
        let registry = HistogramRegistry(memory: memory)
        registry.record("site.c", nanos: 100, site: CallSite(fileID: "App/Feed.swift", line: 7))
        #expect(registry.sites()["site.c"] == ["App/Feed.swift:7"])
        // Damage the site's text in the arena: the check word no longer matches it.
        let entry = memory.entry(0)
        let siteWord = entry.load(fromByteOffset: SpanMemoryLayout.entrySiteOffset, as: UInt64.self)
        let text = memory.arena + Int(UInt32(truncatingIfNeeded: siteWord)) * SpanMemoryLayout.refUnit
        text.storeBytes(of: UInt8(ascii: "X"), as: UInt8.self)
        #expect(registry.sites().isEmpty)
        #expect(registry.snapshot()["site.c"]?.count == 1)
    }
}
