// Reading a prior session's span memory file: its histograms, its last spans and the last moment
// it was known alive.
import CPerfShims
import Glibc

/// What a prior session's `spans.map` held when its process ended.
public struct RecoveredSpanMemory: Sendable, Equatable {
    /// Per-name histograms: every span that ended before the process did (a record cut short by
    /// the kill may or may not be counted; see ``tornRecords``).
    public var histograms: [String: LatencyHistogram]
    /// Per-name over-budget and exit counts (``SpanTally``); names without any are absent.
    public var tallies: [String: SpanTally]
    /// Where each name's first span began (`Module/File.swift:88`), by name.
    public var sites: [String: [String]]
    /// The flight recorder's whole entries, oldest first.
    public var spans: [FlightRecorder.Entry]
    /// Slots of the flight recorder.
    public var ringCapacity: Int
    /// Spans the flight recorder took (its newest ticket).
    public var recorded: UInt64
    /// The last moment the process was known alive as a CLOCK_MONOTONIC and a wall reading (the
    /// newest of its heartbeat and its last span's end, converted with the heartbeat's pair of
    /// clock readings, else the pair read when the memory was made). Every span's monotonic time
    /// is at most this, so it converts them all to wall times.
    public var clockPair: (monotonicNanos: UInt64, wallNanos: UInt64)
    /// The last moment the process was known alive, in wall nanoseconds: the newest of its
    /// heartbeat and of its last span's end.
    public var lastAliveWallNanos: UInt64
    /// Histogram records cut mid-write (one per stripe at most).
    public var tornRecords: Int
    /// Flight recorder slots cut mid-write (skipped).
    public var tornSlots: Int
    /// Entries and references skipped because they did not check out.
    public var damaged: Int
    /// Records the process dropped because the memory was full.
    public var droppedRecords: UInt64
    /// Whether the process closed the memory cleanly.
    public var closedCleanly: Bool

    /// Creates a recovered span memory (recovery reads one with ``read(path:)``).
    public init(
        histograms: [String: LatencyHistogram], spans: [FlightRecorder.Entry], ringCapacity: Int, recorded: UInt64,
        clockPair: (monotonicNanos: UInt64, wallNanos: UInt64), lastAliveWallNanos: UInt64, tornRecords: Int = 0,
        tornSlots: Int = 0, damaged: Int = 0, droppedRecords: UInt64 = 0, closedCleanly: Bool = false,
        sites: [String: [String]] = [:], tallies: [String: SpanTally] = [:]
    ) {
        self.histograms = histograms
        self.tallies = tallies
        self.sites = sites
        self.spans = spans
        self.ringCapacity = ringCapacity
        self.recorded = recorded
        self.clockPair = clockPair
        self.lastAliveWallNanos = lastAliveWallNanos
        self.tornRecords = tornRecords
        self.tornSlots = tornSlots
        self.damaged = damaged
        self.droppedRecords = droppedRecords
        self.closedCleanly = closedCleanly
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.histograms == rhs.histograms && lhs.tallies == rhs.tallies && lhs.sites == rhs.sites
            && lhs.spans == rhs.spans && lhs.ringCapacity == rhs.ringCapacity
            && lhs.recorded == rhs.recorded && lhs.clockPair == rhs.clockPair
            && lhs.lastAliveWallNanos == rhs.lastAliveWallNanos && lhs.tornRecords == rhs.tornRecords
            && lhs.tornSlots == rhs.tornSlots && lhs.damaged == rhs.damaged
            && lhs.droppedRecords == rhs.droppedRecords && lhs.closedCleanly == rhs.closedCleanly
    }

    /// The file name of a session's span memory inside its directory.
    public static let fileName = "spans.map"

    /// Reads the span memory file at `path`.
    ///
    /// - Returns: nil when there is no file (a session that closed cleanly removed it).
    /// - Throws: ``SpanMemoryError`` naming the file and the problem (unreadable, not a span
    ///   memory, another version, a damaged header); the caller reports it and goes on.
    public static func read(path: String) throws(SpanMemoryError) -> RecoveredSpanMemory? {
        let fd: Int32
        switch CoreSyscalls.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) {
        case .success(let opened): fd = Int32(opened)
        case .failure(let code):
            if code == ENOENT { return nil }
            throw SpanMemoryError(path: path, operation: "open", errno: code)
        }
        defer { CoreSyscalls.close(fd) }
        let status: stat
        switch CoreSyscalls.status(of: fd) {
        case .success(let info): status = info
        case .failure(let error): throw SpanMemoryError(path: path, operation: "fstat", errno: error.errno)
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw SpanMemoryError(path: path, operation: "not a regular file", errno: 0)
        }
        let header = try bytes(fd, path: path, count: min(Int(status.st_size), SpanMemoryLayout.headerBytes))
        defer { header.deallocate() }
        let needed: Int
        do {
            let image = try SpanMemoryImage.parse(UnsafeRawPointer(header.baseAddress!), count: header.count)
            needed = min(Int(status.st_size), image.arenaOffset + image.arenaUsed)
        } catch {
            throw SpanMemoryError(path: path, operation: error.operation, errno: 0)
        }
        let all = try bytes(fd, path: path, count: needed)
        defer { all.deallocate() }
        do {
            return try parse(UnsafeRawBufferPointer(all))
        } catch {
            throw SpanMemoryError(path: path, operation: error.operation, errno: 0)
        }
    }

    /// Parses span memory bytes (a file's prefix); never crashes on any input.
    ///
    /// - Throws: ``SpanMemoryError`` for a header that does not check out.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(SpanMemoryError) -> RecoveredSpanMemory {
        // Loads need 8-byte alignment: copy when the caller's bytes are not aligned.
        guard let start = bytes.baseAddress, UInt(bitPattern: start) & 63 == 0 else {
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 64)
            defer { copy.deallocate() }
            if bytes.count > 0 { copy.copyMemory(from: bytes) }
            return try parse(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(copy)[0..<bytes.count]))
        }
        let image = try SpanMemoryImage.parse(start, count: bytes.count)
        let histograms = image.histograms()
        let flight = image.flightEntries()
        let pair = image.heartbeat ?? image.anchor
        let newestEnd = flight.entries.map { $0.startMonotonicNanos &+ $0.durationNanos }.max() ?? 0
        let aliveMonotonic = max(pair.monotonicNanos, newestEnd)
        let aliveWall =
            aliveMonotonic >= pair.monotonicNanos
            ? pair.wallNanos &+ (aliveMonotonic - pair.monotonicNanos) : pair.wallNanos
        return RecoveredSpanMemory(
            histograms: histograms.byName, spans: flight.entries, ringCapacity: image.ringCapacity,
            recorded: flight.recorded, clockPair: (aliveMonotonic, aliveWall), lastAliveWallNanos: aliveWall,
            tornRecords: histograms.tornRecords, tornSlots: flight.torn,
            damaged: histograms.damagedEntries + histograms.badReferences, droppedRecords: image.droppedRecords,
            closedCleanly: image.isClosed, sites: image.sites(), tallies: histograms.tallies)
    }

    /// Reads `count` bytes from the start of `fd` into a 64-byte aligned buffer.
    private static func bytes(_ fd: Int32, path: String, count: Int) throws(SpanMemoryError)
        -> UnsafeMutableRawBufferPointer
    {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 64)
        var done = 0
        while done < count {
            let rest = UnsafeMutableRawBufferPointer(rebasing: buffer[done..<count])
            switch CoreSyscalls.read(fd, into: rest, at: done) {
            case .success(let got) where got > 0:
                done += got
            case .success:
                buffer.deallocate()
                throw SpanMemoryError(path: path, operation: "shorter than it says", errno: 0)
            case .failure(let code):
                buffer.deallocate()
                throw SpanMemoryError(path: path, operation: "read", errno: code)
            }
        }
        return UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
    }
}
