// The byte layout of a span memory file (`sessions/<id>/spans.map`), version 1. Shared by the
// live mapping that writes it and the recovery reader that reads a crashed process's copy.

import CPerfShims

/// Where everything lives in a span memory, in bytes from its start.
///
/// ```text
/// header (one page)    magic, version, sizes, the clock anchor; counters on lines of their own
/// entries              nameCapacity × 192 bytes: one per span name
/// ring                 ringCapacity × lanes × 64 bytes: the flight recorder's slots, lane after lane
/// arena                names, stripes (576 bytes) and bucket chunks (128 bytes), bump-allocated
/// ```
///
/// Nothing is initialised but the header: the kernel hands out zeroed pages, and every structure
/// reads all-zero as empty. A page costs memory only once something is stored on it, so a name
/// recorded by one thread in a few buckets costs one stripe and a chunk or two, about 1 KiB,
/// packed with others on shared pages.
///
/// Integers are stored in the machine's byte order; the magic, read in the wrong order, does
/// not match, so a file from another architecture is refused rather than misread.
public enum SpanMemoryLayout {
    /// "PERFMEM1" as a little-endian word.
    public static let magic: UInt64 = 0x314D_454D_4652_4550
    /// The version this build writes and reads.
    public static let version: UInt32 = 1
    /// Bytes of the header.
    public static let headerBytes = 4096

    // Header words (byte offsets).
    static let magicOffset = 0
    static let versionOffset = 8  // u32 version, u32 header bytes
    static let totalBytesOffset = 16
    static let nameCapacityOffset = 24  // u32 name capacity, u32 entry bytes
    static let entriesOffsetOffset = 32
    static let ringOffsetOffset = 40
    static let ringCapacityOffset = 48
    static let arenaOffsetOffset = 56
    static let arenaBytesOffset = 64
    static let geometryOffset = 72  // u32 stripe bytes, u32 chunk bytes
    static let bucketsOffset = 80  // u32 bucket count, u32 buckets per chunk
    static let stripesOffset = 88  // u32 stripes per entry, i32 pid
    static let anchorMonotonicOffset = 96
    static let anchorWallOffset = 104
    static let layoutCheckOffset = 112
    /// How many lanes of `ringCapacity` slots the ring has (`perf_flight_lane_count` of its
    /// capacity); 0 in a file written before rings had lanes, read as 1. Outside the layout
    /// check (whose words are fixed); the region sizes must agree with it.
    static let ringLanesOffset = 120
    /// Entries claimed so far (a fetch-add), on a line of its own.
    static let entryCountOffset = 128
    /// Arena bytes handed out so far (a fetch-add), on a line of its own.
    static let arenaUsedOffset = 192
    /// Heartbeat: a sequence word (odd while written), CLOCK_MONOTONIC and wall nanoseconds.
    static let heartbeatOffset = 256
    /// Records dropped: the name table was full or the arena ran out.
    static let droppedRecordsOffset = 320
    /// Names that found no entry (each counted once per table probe that failed).
    static let droppedNamesOffset = 328
    /// Set by a clean close; a reader of a file with it set knows the process ended normally.
    static let closedOffset = 384
    /// Number of header words the layout check covers.
    static let checkedWords = layoutCheckOffset / 8

    // Entries.
    /// Bytes of one entry.
    public static let entryBytes = 192
    static let entryKeyOffset = 0  // the name's address in the writing process: meaningless to others
    static let entryNameOffset = 8  // u32 arena offset of the name's bytes, u32 length
    static let entryCheckOffset = 16  // check of the name fields and bytes; 0 while incomplete
    static let entryRefOffset = 24  // u32 the entry's own number plus one (what ring slots store)
    static let entrySiteOffset = 32  // u32 arena offset of the first end's call site text, u32 length
    static let entrySiteCheckOffset = 40  // check of the site fields and text; 0 when none
    /// u32 arena reference to the name's tally block (``SpanTally``), 0 until its first
    /// over-budget or non-success end; files written before tallies have 0 here.
    static let entryTallyOffset = 48
    static let entryStripesOffset = 64  // u32 stripe refs, one per stripe index
    /// Stripe slots per entry.
    public static let stripesPerEntry = 32

    // Stripes: sequence word, sum, inverted minimum, maximum, then one u32 chunk ref per group of
    // buckets, then a tag that marks a stripe.
    /// Bytes of one stripe.
    public static let stripeBytes = 576
    static let stripeSequenceWord = 0
    static let stripeSumWord = 1
    /// Stored inverted (`~min`), so a zeroed stripe reads as "no minimum yet".
    static let stripeInvertedMinWord = 2
    static let stripeMaxWord = 3
    static let stripeChunkRefsOffset = 32
    /// An exclusive stripe's last record's bucket, not yet added to its chunk: `ref << 32 |
    /// (index + 1)`, 0 when none (see ``AtomicHistogramStripe/recordExclusively(nanos:memory:)``).
    /// Readers count it as one more in bucket `index`.
    static let stripePendingOffset = 560
    static let stripeTagOffset = 568
    /// "STRIPE01": marks the start of a stripe, so a reference to anything else is caught.
    static let stripeTag: UInt64 = 0x3130_4550_4952_5453

    // Tally blocks: one u64 per ``TallyWord`` (atomic adds), then a tag at the block's end.
    /// Bytes of one tally block.
    static let tallyBytes = 128
    static let tallyTagOffset = 120
    /// "TALLY001": marks a tally block, so a reference to anything else is caught.
    static let tallyTag: UInt64 = 0x3130_3059_4C4C_4154

    /// Buckets per chunk: a quarter of an octave, so the durations of one span name usually touch
    /// one or two chunks.
    public static let bucketsPerChunk = 16
    static let bucketsPerChunkShift = 4
    /// Bytes of one chunk.
    public static let chunkBytes = bucketsPerChunk * 8
    /// Chunk groups per stripe.
    static let chunkGroups = HistogramLayout.bucketCount / bucketsPerChunk
    /// References count 64-byte units of the arena: 2^32 of them address 256 GiB.
    static let refUnit = 64
    /// Every arena allocation starts on, and fills, whole 128-byte pairs of lines: the CPU's
    /// adjacent-line prefetcher moves lines in such pairs, so two threads' stripes or chunks that
    /// shared a pair contended as if they shared a line.
    static let allocationAlignment = 128
    /// Bytes of one flight recorder slot.
    public static let slotBytes = 64

    /// The default mapping size: 8 MiB of address space (and of disk, reserved), of which only
    /// touched pages cost memory: with the default 4,096-slot ring (four lanes, 1 MiB), room for about
    /// 6,500 name-and-thread stripes.
    public static let defaultBytes = 8 << 20
    /// The largest mapping accepted: references are 32-bit counts of 64-byte units.
    public static let maximumBytes = 1 << 36

    static func roundUpToPage(_ bytes: Int) -> Int { (bytes + 4095) & ~4095 }

    /// The ring region's bytes for a capacity: every lane's slots, in whole pages.
    static func ringBytes(_ ringCapacity: Int, lanes: Int? = nil) -> Int {
        guard ringCapacity > 0 else { return 0 }
        let lanes = lanes ?? Int(perf_flight_lane_count(UInt64(ringCapacity)))
        return roundUpToPage(ringCapacity * lanes * slotBytes)
    }

    /// The region offsets for a mapping of `totalBytes` with the given name and ring capacities,
    /// or nil when the arena would be smaller than one page.
    static func regions(totalBytes: Int, nameCapacity: Int, ringCapacity: Int)
        -> (entries: Int, ring: Int, arena: Int, arenaBytes: Int)?
    {
        let entries = headerBytes
        let ring = entries + roundUpToPage(nameCapacity * entryBytes)
        let arena = ring + ringBytes(ringCapacity)
        guard totalBytes - arena >= 4096 else { return nil }
        return (entries, ring, arena, totalBytes - arena)
    }
}
