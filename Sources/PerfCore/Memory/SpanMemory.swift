// A session's span memory: one mapping that holds the span histograms and the flight recorder,
// shared with a file in the session's directory so that a killed process leaves them behind.
import CPerfShims
import Glibc
import Synchronization

/// The memory behind a ``HistogramRegistry`` and a ``FlightRecorder``: either a file mapped
/// `MAP_SHARED` (`sessions/<id>/spans.map`) or anonymous memory.
///
/// Stores on the hot path stay plain memory stores. With a file, every store lives in the page
/// cache the moment it is made, so after a crash or SIGKILL the next process reads every span
/// that ended before it (``SpanMemoryImage``); only a power loss before the kernel writes the
/// pages back loses them. The file's blocks are reserved when it is made (`fallocate`), so a
/// later store never meets a full disk (which would raise SIGBUS); where that is not possible the
/// memory falls back to anonymous pages and ``isFileBacked`` says so.
///
/// Pages cost memory only once touched: the mapping's size is a cap, not a cost.
///
/// ```swift
/// let memory = try SpanMemory.create(path: dir + "/spans.map", configuration: .init())
/// let histograms = HistogramRegistry(memory: memory)
/// let flight = FlightRecorder(memory: memory)
/// ```
public final class SpanMemory: @unchecked Sendable {
    // @unchecked: the mapping is written only through the C atomics or before publication.

    /// The sizes of a span memory.
    public struct Configuration: Sendable, Equatable {
        /// Bytes of the mapping (header, entries, ring and arena); rounded up to a page, at least
        /// 64 KiB above the entries and ring, at most 64 GiB.
        public var bytes: Int
        /// Span names it holds; rounded up to a power of two, 1 to 2^20.
        public var nameCapacity: Int
        /// Flight recorder capacity; rounded up to a power of two, 0 (no ring) to 2^20. From 1,024
        /// up the ring has four lanes of this many slots (see ``FlightRecorder``).
        public var ringCapacity: Int

        /// Creates a configuration.
        public init(bytes: Int = SpanMemoryLayout.defaultBytes, nameCapacity: Int = 1024, ringCapacity: Int = 4096) {
            self.bytes = bytes
            self.nameCapacity = nameCapacity
            self.ringCapacity = ringCapacity
        }

        /// The sizes actually used.
        var normalized: Configuration {
            let names = Self.powerOfTwo(atLeast: max(1, nameCapacity), cap: 1 << 20)
            let ring = ringCapacity <= 0 ? 0 : Self.powerOfTwo(atLeast: ringCapacity, cap: 1 << 20)
            let minimum =
                SpanMemoryLayout.headerBytes + SpanMemoryLayout.roundUpToPage(names * SpanMemoryLayout.entryBytes)
                + SpanMemoryLayout.ringBytes(ring) + 65536
            let total = SpanMemoryLayout.roundUpToPage(min(max(bytes, minimum), SpanMemoryLayout.maximumBytes))
            return Configuration(bytes: total, nameCapacity: names, ringCapacity: ring)
        }

        private static func powerOfTwo(atLeast value: Int, cap: Int) -> Int {
            var result = 1
            while result < min(value, cap) { result <<= 1 }
            return result
        }
    }

    /// The file, or nil for anonymous memory.
    public let path: String?
    /// The sizes in use.
    /// Run once, at the first dropped record.
    private let firstDrop = Mutex<(@Sendable () -> Void)?>(nil)
    public let configuration: Configuration
    let base: UnsafeMutableRawPointer
    let entriesOffset: Int
    let ringOffset: Int
    let arenaOffset: Int
    let arenaBytes: Int

    /// Whether a file holds the memory (crash-durable) rather than anonymous pages.
    public var isFileBacked: Bool { path != nil }

    private init(path: String?, configuration: Configuration, base: UnsafeMutableRawPointer) {
        let regions = SpanMemoryLayout.regions(
            totalBytes: configuration.bytes, nameCapacity: configuration.nameCapacity,
            ringCapacity: configuration.ringCapacity)!
        self.path = path
        self.configuration = configuration
        self.base = base
        entriesOffset = regions.entries
        ringOffset = regions.ring
        arenaOffset = regions.arena
        arenaBytes = regions.arenaBytes
    }

    deinit { CoreSyscalls.unmap(base, bytes: configuration.bytes) }

    /// Anonymous memory: nothing survives the process.
    ///
    /// - Throws: ``SpanMemoryError`` when the address space cannot be reserved.
    public static func anonymous(
        _ configuration: Configuration = Configuration(), anchorMonotonicNanos: UInt64 = perf_monotonic_ns(),
        anchorWallNanos: UInt64 = perf_realtime_ns()
    ) throws(SpanMemoryError) -> SpanMemory {
        let sizes = configuration.normalized
        guard !AllocationFaults.fails(.anonymousMapping) else {
            throw SpanMemoryError(path: nil, operation: "mmap", errno: ENOMEM)
        }
        let mapped: UnsafeMutableRawPointer
        switch CoreSyscalls.map(bytes: sizes.bytes, flags: MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE) {
        case .success(let pointer): mapped = pointer
        case .failure(let error): throw SpanMemoryError(path: nil, operation: "mmap", errno: error.errno)
        }
        let memory = SpanMemory(path: nil, configuration: sizes, base: mapped)
        memory.writeHeader(anchorMonotonicNanos: anchorMonotonicNanos, anchorWallNanos: anchorWallNanos)
        return memory
    }

    /// A new file at `path` (mode 0600, which must not exist yet), its blocks reserved, mapped shared.
    ///
    /// - Throws: ``SpanMemoryError`` naming the call that failed: the file exists, the disk is
    ///   full (`fallocate`), the filesystem cannot reserve blocks, or the mapping failed. The
    ///   file is removed again on failure.
    public static func create(
        path: String, _ configuration: Configuration = Configuration(),
        anchorMonotonicNanos: UInt64 = perf_monotonic_ns(), anchorWallNanos: UInt64 = perf_realtime_ns()
    ) throws(SpanMemoryError) -> SpanMemory {
        let sizes = configuration.normalized
        // Under a file-size limit (`ulimit -f`) below the mapping, fallocate would raise SIGXFSZ in
        // the host before failing with EFBIG: do not provoke it, say so.
        if let limit = CoreSyscalls.fileSizeLimit(), limit < rlim_t(sizes.bytes) {
            throw SpanMemoryError(
                path: path,
                operation: "the file size limit (ulimit -f, \(limit) bytes) is below its "
                    + "\(sizes.bytes) bytes", errno: 0)
        }
        let fd: Int32
        switch CoreSyscalls.open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode: 0o600) {
        case .success(let opened): fd = Int32(opened)
        case .failure(let code): throw SpanMemoryError(path: path, operation: "open", errno: code)
        }
        defer { CoreSyscalls.close(fd) }
        func fail(_ operation: String, _ code: Int32) -> SpanMemoryError {
            _ = CoreSyscalls.unlink(path)
            return SpanMemoryError(path: path, operation: operation, errno: code)
        }
        let reserved = CoreSyscalls.reserve(fd, bytes: sizes.bytes)
        guard reserved == 0 else { throw fail("fallocate", reserved) }
        guard !AllocationFaults.fails(.fileMapping) else { throw fail("mmap", ENOMEM) }
        let mapped: UnsafeMutableRawPointer
        switch CoreSyscalls.map(bytes: sizes.bytes, flags: MAP_SHARED, fd: fd) {
        case .success(let pointer): mapped = pointer
        case .failure(let error): throw fail("mmap", error.errno)
        }
        let memory = SpanMemory(path: path, configuration: sizes, base: mapped)
        memory.writeHeader(anchorMonotonicNanos: anchorMonotonicNanos, anchorWallNanos: anchorWallNanos)
        return memory
    }

    private func writeHeader(anchorMonotonicNanos: UInt64, anchorWallNanos: UInt64) {
        typealias L = SpanMemoryLayout
        func put(_ offset: Int, _ value: UInt64) { base.storeBytes(of: value, toByteOffset: offset, as: UInt64.self) }
        func pair(_ low: Int, _ high: Int) -> UInt64 {
            UInt64(UInt32(low)) | UInt64(UInt32(bitPattern: Int32(high))) << 32
        }
        put(L.versionOffset, pair(Int(L.version), L.headerBytes))
        put(L.totalBytesOffset, UInt64(configuration.bytes))
        put(L.nameCapacityOffset, pair(configuration.nameCapacity, L.entryBytes))
        put(L.entriesOffsetOffset, UInt64(entriesOffset))
        put(L.ringOffsetOffset, UInt64(ringOffset))
        put(L.ringCapacityOffset, UInt64(configuration.ringCapacity))
        put(L.ringLanesOffset, perf_flight_lane_count(UInt64(configuration.ringCapacity)))
        put(L.arenaOffsetOffset, UInt64(arenaOffset))
        put(L.arenaBytesOffset, UInt64(arenaBytes))
        put(L.geometryOffset, pair(L.stripeBytes, L.chunkBytes))
        put(L.bucketsOffset, pair(HistogramLayout.bucketCount, L.bucketsPerChunk))
        put(L.stripesOffset, pair(L.stripesPerEntry, Int(getpid())))
        put(L.anchorMonotonicOffset, anchorMonotonicNanos)
        put(L.anchorWallOffset, anchorWallNanos)
        // Arena offset 0 is never handed out, so a zero reference always means "none".
        put(L.arenaUsedOffset, UInt64(L.allocationAlignment))
        put(L.magicOffset, L.magic)
        put(L.layoutCheckOffset, SpanMemoryLayout.layoutCheck(UnsafeRawPointer(base)))
    }

    func word(_ offset: Int) -> UnsafeMutablePointer<UInt64> {
        (base + offset).assumingMemoryBound(to: UInt64.self)
    }

    /// The arena's first byte.
    var arena: UnsafeMutableRawPointer { base + arenaOffset }

    /// Hands out `bytes` (rounded up to 128) of zeroed arena; returns a reference in 64-byte units,
    /// or 0 when the arena is used up.
    func allocate(bytes: Int) -> UInt32 {
        let unit = SpanMemoryLayout.allocationAlignment
        let rounded = UInt64((bytes + unit - 1) & ~(unit - 1))
        let start = perf_atomic_add_u64(word(SpanMemoryLayout.arenaUsedOffset), rounded)
        guard start + rounded <= UInt64(arenaBytes) else { return 0 }
        return UInt32(truncatingIfNeeded: start / UInt64(SpanMemoryLayout.refUnit))
    }

    /// Claims the next entry; nil once every entry is taken.
    func claimEntry() -> Int? {
        let index = perf_atomic_add_u64(word(SpanMemoryLayout.entryCountOffset), 1)
        return index < UInt64(configuration.nameCapacity) ? Int(index) : nil
    }

    /// The start of entry `index`.
    func entry(_ index: Int) -> UnsafeMutableRawPointer { base + entriesOffset + index * SpanMemoryLayout.entryBytes }

    /// The ring's slots, or nil without a ring.
    var ringSlots: UnsafeMutablePointer<perf_flight_slot>? {
        configuration.ringCapacity == 0 ? nil : (base + ringOffset).assumingMemoryBound(to: perf_flight_slot.self)
    }

    /// Counts a record dropped for want of room; the first one runs the action
    /// ``whenFirstRecordIsDropped(_:)`` set, once.
    func countDroppedRecord() {
        guard perf_atomic_add_u64(word(SpanMemoryLayout.droppedRecordsOffset), 1) == 0 else { return }
        let action = firstDrop.withLock { action -> (@Sendable () -> Void)? in
            defer { action = nil }
            return action
        }
        action?()
    }

    /// What to do when the first span end finds no room (a name past the capacity, the bytes used
    /// up): the runtime says so once on stderr. Replaces any earlier action.
    public func whenFirstRecordIsDropped(_ action: @escaping @Sendable () -> Void) {
        firstDrop.withLock { $0 = action }
    }

    /// Records dropped because the name table was full or the arena ran out.
    public var droppedRecordCount: UInt64 { perf_atomic_load_u64(word(SpanMemoryLayout.droppedRecordsOffset)) }

    /// Arena bytes handed out so far (at most the arena's size).
    public var arenaUsedBytes: Int {
        min(Int(perf_atomic_load_u64(word(SpanMemoryLayout.arenaUsedOffset))), arenaBytes)
    }

    /// Span names holding an entry.
    public var nameCount: Int {
        min(Int(perf_atomic_load_u64(word(SpanMemoryLayout.entryCountOffset))), configuration.nameCapacity)
    }

    /// Stores the last moment the process was known alive. Called from one thread at a time
    /// (a timer); a reader of a crashed process's file takes the newest heartbeat it finds whole.
    public func heartbeat(monotonicNanos: UInt64, wallNanos: UInt64) {
        let sequence = word(SpanMemoryLayout.heartbeatOffset)
        let next = perf_atomic_load_u64(sequence) | 1
        perf_atomic_store_u64(sequence, next)
        perf_atomic_store_u64(sequence + 1, monotonicNanos)
        perf_atomic_store_u64(sequence + 2, wallNanos)
        perf_atomic_store_u64_release(sequence, next + 1)
    }

    /// Ends the memory cleanly: removes the file, and swaps the pages for fresh anonymous ones at
    /// the same addresses, so the file's blocks and page cache (or the anonymous pages) are given
    /// back now rather than when the process exits. Take any snapshot first: the counters start
    /// again from zero. The addresses stay valid, so a span begun before and ending after still
    /// records (into the fresh memory) and never faults.
    public func close() {
        perf_atomic_store_u64_release(word(SpanMemoryLayout.closedOffset), 1)
        if let path { _ = CoreSyscalls.unlink(path) }
        let flags = MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE
        guard case .success(let mapped) = CoreSyscalls.map(base, bytes: configuration.bytes, flags: flags),
            mapped == base
        else { return }
        writeHeader(anchorMonotonicNanos: perf_monotonic_ns(), anchorWallNanos: perf_realtime_ns())
        perf_atomic_store_u64_release(word(SpanMemoryLayout.closedOffset), 1)
    }

    /// Writes the file's dirty pages back now (`msync(MS_SYNC)`), as the kernel's writeback does
    /// every few seconds: afterwards the next store to each page takes a write fault. For
    /// benchmarks that measure that cost, and for callers that want the pages on disk (against a
    /// power loss) at a moment of their choosing. Returns 0 or an errno; 0 for anonymous memory.
    @discardableResult
    public func synchronize() -> Int32 {
        guard path != nil else { return 0 }
        return CoreSyscalls.synchronize(base, bytes: configuration.bytes)
    }

    /// Stores to every resident page of the used part of a file-backed memory (a compare-and-swap
    /// of its first word with itself, which changes no value), so that the write fault the kernel
    /// arms on a page it has just written back is taken here, on the heartbeat's thread, and not
    /// by the next span that ends into the page. Pages never touched stay untouched (`mincore`).
    /// Returns the pages stored to; 0 for anonymous memory, which is never written back.
    @discardableResult
    public func redirtyResidentPages() -> Int {
        guard path != nil else { return 0 }
        let length = arenaOffset + arenaUsedBytes
        let pages = (length + 4095) / 4096
        var resident = [UInt8](repeating: 0, count: pages)
        guard CoreSyscalls.residentPages(base, length: length, into: &resident) else { return 0 }
        var stored = 0
        for page in 0..<pages where resident[page] & 1 != 0 {
            perf_touch_for_write(word(page * 4096))
            stored += 1
        }
        return stored
    }

    /// A read-only view of the live memory, for snapshots.
    var image: SpanMemoryImage {
        SpanMemoryImage(unchecked: UnsafeRawPointer(base), count: arenaOffset + arenaUsedBytes, memory: self)
    }
}

/// A span memory that could not be made or read.
public struct SpanMemoryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file, or nil for anonymous memory.
    public var path: String?
    /// The call or check that failed.
    public var operation: String
    /// The errno, when a call failed.
    public var errno: Int32

    /// Creates an error.
    public init(path: String?, operation: String, errno: Int32) {
        self.path = path
        self.operation = operation
        self.errno = errno
    }

    public var description: String {
        let reason = errno == 0 ? operation : "\(operation): \(String(cString: strerror(errno)))"
        return path.map { "span memory \($0): \(reason)" } ?? "span memory: \(reason)"
    }
}

extension SpanMemoryLayout {
    /// The check word of the header's fixed words: a mix that a torn or foreign header fails.
    static func layoutCheck(_ base: UnsafeRawPointer) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for index in 0..<checkedWords {
            hash = (hash ^ base.load(fromByteOffset: index * 8, as: UInt64.self)) &* 0x0000_0100_0000_01B3
            hash ^= hash >> 29
        }
        return hash | 1
    }
}
