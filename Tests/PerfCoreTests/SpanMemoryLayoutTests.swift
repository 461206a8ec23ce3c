// Span memory's layout constants fit together: every field inside its record, no two fields on
// the same bytes, sizes that the readers' arithmetic relies on. A changed constant that breaks
// the file format fails here, before any file is written with it.
import Testing

@testable import PerfCore

@Suite struct SpanMemoryLayoutTests {
    typealias Layout = SpanMemoryLayout

    /// `(offset, bytes)` ranges that must not overlap and must end within `limit`.
    private func expectDisjoint(_ fields: [(String, Int, Int)], within limit: Int) {
        let sorted = fields.sorted { $0.1 < $1.1 }
        for (index, field) in sorted.enumerated() {
            #expect(field.1 >= 0 && field.1 + field.2 <= limit, "\(field.0) at \(field.1)+\(field.2) past \(limit)")
            if index + 1 < sorted.count {
                let next = sorted[index + 1]
                #expect(field.1 + field.2 <= next.1, "\(field.0) overlaps \(next.0)")
            }
        }
    }

    @Test func headerFieldsAreDisjointAndInsideTheHeader() {
        expectDisjoint(
            [
                ("magic", Layout.magicOffset, 8), ("version", Layout.versionOffset, 8),
                ("totalBytes", Layout.totalBytesOffset, 8), ("nameCapacity", Layout.nameCapacityOffset, 8),
                ("entriesOffset", Layout.entriesOffsetOffset, 8), ("ringOffset", Layout.ringOffsetOffset, 8),
                ("ringCapacity", Layout.ringCapacityOffset, 8), ("arenaOffset", Layout.arenaOffsetOffset, 8),
                ("arenaBytes", Layout.arenaBytesOffset, 8), ("geometry", Layout.geometryOffset, 8),
                ("buckets", Layout.bucketsOffset, 8), ("stripes", Layout.stripesOffset, 8),
                ("anchorMonotonic", Layout.anchorMonotonicOffset, 8), ("anchorWall", Layout.anchorWallOffset, 8),
                ("layoutCheck", Layout.layoutCheckOffset, 8), ("ringLanes", Layout.ringLanesOffset, 8),
                ("entryCount", Layout.entryCountOffset, 8), ("arenaUsed", Layout.arenaUsedOffset, 8),
                ("heartbeat", Layout.heartbeatOffset, 8), ("droppedRecords", Layout.droppedRecordsOffset, 8),
                ("droppedNames", Layout.droppedNamesOffset, 8), ("closed", Layout.closedOffset, 8),
            ], within: Layout.headerBytes)
        // The check word covers the words before it, and only those.
        #expect(Layout.checkedWords * 8 == Layout.layoutCheckOffset)
    }

    @Test func entryFieldsAreDisjointAndInsideAnEntry() {
        expectDisjoint(
            [
                ("key", Layout.entryKeyOffset, 8), ("name", Layout.entryNameOffset, 8),
                ("check", Layout.entryCheckOffset, 8), ("ref", Layout.entryRefOffset, 8),
                ("site", Layout.entrySiteOffset, 8), ("siteCheck", Layout.entrySiteCheckOffset, 8),
                ("tally", Layout.entryTallyOffset, 8),
                ("stripes", Layout.entryStripesOffset, Layout.stripesPerEntry * 4),
            ], within: Layout.entryBytes)
        #expect(Layout.entryBytes % 64 == 0, "entries start on cache lines")
    }

    @Test func stripeAndTallyFieldsAreDisjointAndInsideTheirBlocks() {
        expectDisjoint(
            [
                ("sequence", Layout.stripeSequenceWord * 8, 8), ("sum", Layout.stripeSumWord * 8, 8),
                ("invertedMin", Layout.stripeInvertedMinWord * 8, 8), ("max", Layout.stripeMaxWord * 8, 8),
                ("chunkRefs", Layout.stripeChunkRefsOffset, Layout.chunkGroups * 4),
                ("pending", Layout.stripePendingOffset, 8), ("tag", Layout.stripeTagOffset, 8),
            ], within: Layout.stripeBytes)
        #expect(Layout.tallyTagOffset + 8 <= Layout.tallyBytes)
        #expect(Layout.stripeBytes % 64 == 0 && Layout.tallyBytes % 64 == 0, "blocks start on cache lines")
    }

    @Test func bucketsSplitIntoWholeChunks() {
        #expect(HistogramLayout.bucketCount % Layout.bucketsPerChunk == 0)
        #expect(1 << Layout.bucketsPerChunkShift == Layout.bucketsPerChunk)
        #expect(Layout.chunkGroups * Layout.bucketsPerChunk == HistogramLayout.bucketCount)
    }
}
