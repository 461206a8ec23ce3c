// Reading a span memory: the live one for snapshots, or a crashed process's file for recovery.
// Every read is bounds-checked against the bytes present, so no byte sequence can crash it.
import CPerfShims

/// A read-only, bounds-checked view of span memory bytes.
///
/// Built over the live mapping (``SpanMemory/image``, whose header this process wrote) or over a
/// file's bytes after ``parse(_:count:)`` checked the header: magic, version, a check word over
/// the fixed fields, and sizes that describe regions inside the file. Entries whose check word does
/// not match their name, stripes without their tag, and references past the bytes present are
/// skipped and counted, never followed.
struct SpanMemoryImage {
    typealias L = SpanMemoryLayout
    let base: UnsafeRawPointer
    let count: Int
    let nameCapacity: Int
    let entriesOffset: Int
    let ringOffset: Int
    let ringCapacity: Int
    /// Lanes of `ringCapacity` slots each (a power of two up to `PERF_FLIGHT_MAX_LANES`); 1 when
    /// the file says 0 (written before lanes) or something this build does not read.
    let ringLanes: Int
    let arenaOffset: Int
    let arenaUsed: Int
    /// Keeps the live mapping alive while the image is read.
    let memory: SpanMemory?

    init(unchecked base: UnsafeRawPointer, count: Int, memory: SpanMemory) {
        self.base = base
        self.count = count
        self.memory = memory
        nameCapacity = memory.configuration.nameCapacity
        entriesOffset = memory.entriesOffset
        ringOffset = memory.ringOffset
        ringCapacity = memory.configuration.ringCapacity
        ringLanes = Int(perf_flight_lane_count(UInt64(ringCapacity)))
        arenaOffset = memory.arenaOffset
        arenaUsed = memory.arenaUsedBytes
    }

    private init(
        base: UnsafeRawPointer, count: Int, nameCapacity: Int, entriesOffset: Int, ringOffset: Int,
        ringCapacity: Int, ringLanes: Int, arenaOffset: Int, arenaUsed: Int
    ) {
        self.base = base
        self.count = count
        self.nameCapacity = nameCapacity
        self.entriesOffset = entriesOffset
        self.ringOffset = ringOffset
        self.ringCapacity = ringCapacity
        self.ringLanes = ringLanes
        self.arenaOffset = arenaOffset
        self.arenaUsed = arenaUsed
        self.memory = nil
    }

    /// Checks the header of `count` bytes at `base` (8-byte aligned) and returns the view.
    ///
    /// - Throws: ``SpanMemoryError`` (operation names the problem) for a short file, a wrong magic
    ///   (another file, or another byte order), another version, a failed check word, or regions
    ///   that do not fit the file.
    static func parse(_ base: UnsafeRawPointer, count: Int) throws(SpanMemoryError) -> SpanMemoryImage {
        func bad(_ problem: String) -> SpanMemoryError { SpanMemoryError(path: nil, operation: problem, errno: 0) }
        guard count >= L.headerBytes else { throw bad("shorter than its header (\(count) bytes)") }
        func word(_ offset: Int) -> UInt64 { base.load(fromByteOffset: offset, as: UInt64.self) }
        func low(_ offset: Int) -> Int { Int(UInt32(truncatingIfNeeded: word(offset))) }
        func high(_ offset: Int) -> Int { Int(UInt32(truncatingIfNeeded: word(offset) >> 32)) }
        guard word(L.magicOffset) == L.magic else { throw bad("not a span memory file (magic)") }
        guard low(L.versionOffset) == Int(L.version) else {
            throw bad("span memory version \(low(L.versionOffset)), this build reads \(L.version)")
        }
        guard word(L.layoutCheckOffset) == L.layoutCheck(base) else { throw bad("header check word does not match") }
        guard high(L.versionOffset) == L.headerBytes, high(L.nameCapacityOffset) == L.entryBytes,
            low(L.geometryOffset) == L.stripeBytes, high(L.geometryOffset) == L.chunkBytes,
            low(L.bucketsOffset) == HistogramLayout.bucketCount, high(L.bucketsOffset) == L.bucketsPerChunk,
            low(L.stripesOffset) == L.stripesPerEntry
        else { throw bad("geometry differs from this build's") }
        let total = word(L.totalBytesOffset)
        let names = UInt64(low(L.nameCapacityOffset))
        let ringCapacity = word(L.ringCapacityOffset)
        let entries = word(L.entriesOffsetOffset)
        let ring = word(L.ringOffsetOffset)
        let arena = word(L.arenaOffsetOffset)
        let arenaBytes = word(L.arenaBytesOffset)
        let lanes = lanes(word: word(L.ringLanesOffset), ringCapacity: Int(min(ringCapacity, 1 << 20)))
        guard total <= UInt64(L.maximumBytes), names >= 1, names <= 1 << 20, ringCapacity <= 1 << 20,
            entries == UInt64(L.headerBytes), ring == entries + UInt64(L.roundUpToPage(Int(names) * L.entryBytes)),
            arena == ring + UInt64(L.ringBytes(Int(ringCapacity), lanes: lanes)), arena + arenaBytes == total
        else { throw bad("region sizes are inconsistent") }
        let used = min(word(L.arenaUsedOffset), arenaBytes)
        return SpanMemoryImage(
            base: base, count: min(count, Int(arena + used)), nameCapacity: Int(names), entriesOffset: Int(entries),
            ringOffset: Int(ring), ringCapacity: Int(ringCapacity),
            ringLanes: lanes, arenaOffset: Int(arena),
            arenaUsed: Int(used))
    }

    /// The ring's lanes as a header word gives them: a power of two up to `PERF_FLIGHT_MAX_LANES`
    /// for a ring with slots, else 1.
    static func lanes(word: UInt64, ringCapacity: Int) -> Int {
        guard word > 1, word <= UInt64(PERF_FLIGHT_MAX_LANES), word & (word - 1) == 0, ringCapacity > 0
        else { return 1 }
        return Int(word)
    }

    // MARK: Bounded loads

    /// The word at `offset`, or nil past the bytes present.
    func word(_ offset: Int) -> UInt64? {
        guard offset >= 0, offset & 7 == 0, offset <= count - 8 else { return nil }
        return perf_atomic_load_u64((base + offset).assumingMemoryBound(to: UInt64.self))
    }

    func wordAcquire(_ offset: Int) -> UInt64? {
        guard offset >= 0, offset & 7 == 0, offset <= count - 8 else { return nil }
        return perf_atomic_load_u64_acquire((base + offset).assumingMemoryBound(to: UInt64.self))
    }

    func half(_ offset: Int) -> UInt32? {
        guard offset >= 0, offset & 3 == 0, offset <= count - 4 else { return nil }
        return perf_atomic_load_u32_acquire((base + offset).assumingMemoryBound(to: UInt32.self))
    }

    /// The byte offset of arena reference `ref` when `bytes` from it are present.
    func arenaStart(_ ref: UInt32, bytes: Int) -> Int? {
        guard ref != 0 else { return nil }
        let start = arenaOffset + Int(ref) * L.refUnit
        return start + bytes <= min(count, arenaOffset + arenaUsed) ? start : nil
    }

    // MARK: Header fields

    var droppedRecords: UInt64 { word(L.droppedRecordsOffset) ?? 0 }
    var anchor: (monotonicNanos: UInt64, wallNanos: UInt64) {
        (word(L.anchorMonotonicOffset) ?? 0, word(L.anchorWallOffset) ?? 0)
    }
    var isClosed: Bool { (word(L.closedOffset) ?? 0) != 0 }
    var pid: Int32 { Int32(truncatingIfNeeded: (word(L.stripesOffset) ?? 0) >> 32) }

    /// The newest whole heartbeat, or nil when none was written (or it was cut mid-write).
    var heartbeat: (monotonicNanos: UInt64, wallNanos: UInt64)? {
        guard let sequence = word(L.heartbeatOffset), sequence != 0, sequence & 1 == 0,
            let monotonic = word(L.heartbeatOffset + 8), let wall = word(L.heartbeatOffset + 16)
        else { return nil }
        return (monotonic, wall)
    }

    /// Entries claimed, within the capacity and the bytes present.
    var entryCount: Int {
        let claimed = Int(min(word(L.entryCountOffset) ?? 0, UInt64(nameCapacity)))
        return max(0, min(claimed, (min(count, ringOffset) - entriesOffset) / L.entryBytes))
    }

    /// The name of entry `index` when its check word matches its text; nil for an abandoned,
    /// incomplete or damaged entry.
    func name(ofEntry index: Int) -> String? {
        guard index >= 0, index < entryCount else { return nil }
        let entry = entriesOffset + index * L.entryBytes
        // Acquire: the name fields and text were written before the check word was released.
        guard let check = wordAcquire(entry + L.entryCheckOffset), check != 0,
            let nameWord = word(entry + L.entryNameOffset)
        else { return nil }
        let length = Int(nameWord >> 32)
        guard length <= AtomicHistogramEntry.maximumNameBytes,
            let start = arenaStart(UInt32(truncatingIfNeeded: nameWord), bytes: length)
        else { return nil }
        let bytes = UnsafeRawBufferPointer(start: base + start, count: length)
        guard L.entryCheck(nameWord: nameWord, bytes: bytes) == check else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The call site kept with an entry (where its name's first span began), or nil when it has
    /// none or its check word does not match. Read only for an entry whose name is valid.
    func site(ofEntry index: Int) -> String? {
        guard index >= 0, index < entryCount else { return nil }
        let entry = entriesOffset + index * L.entryBytes
        guard let check = word(entry + L.entrySiteCheckOffset), check != 0,
            let siteWord = word(entry + L.entrySiteOffset)
        else { return nil }
        let length = Int(siteWord >> 32)
        guard length > 0, length <= AtomicHistogramEntry.maximumSiteBytes,
            let start = arenaStart(UInt32(truncatingIfNeeded: siteWord), bytes: length)
        else { return nil }
        let bytes = UnsafeRawBufferPointer(start: base + start, count: length)
        guard L.entryCheck(nameWord: siteWord, bytes: bytes) == check else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Every entry's call site, by name (sorted, distinct; names without one are absent).
    func sites() -> [String: [String]] {
        var byName: [String: Set<String>] = [:]
        for index in 0..<entryCount {
            guard let name = name(ofEntry: index), let site = site(ofEntry: index) else { continue }
            byName[name, default: []].insert(site)
        }
        return byName.mapValues { $0.sorted() }
    }
}
