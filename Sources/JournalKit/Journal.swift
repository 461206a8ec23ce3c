// The journal's writer: one write(2) per entry on an O_APPEND descriptor, a lock that only
// reserves room (ordinary appends write after releasing it), rotation at half the byte budget,
// dropped segments unlinked off the append path.
import Foundation
import Glibc
import Synchronization

/// A crash-durable, append-only journal of opaque entries.
///
/// Entries are framed `[u32 length][u32 crc32c][payload]` (little-endian) in numbered
/// segment files that rotate at half of ``Configuration/byteBudget``; when a new segment
/// would push the journal past its budget, the oldest whole segment is dropped (a flight
/// recorder). When ``append(_:)-(Data)`` returns, the entry is in the kernel page cache and
/// survives the process being killed at any instant; ``Durability/fsync`` extends that to
/// power loss.
///
/// ```swift
/// let journal = try Journal(directory: url, configuration: .init(byteBudget: 8 << 20))
/// try journal.append(Data("span begin".utf8))
/// // …after a crash, in the next run:
/// let recovery = try Journal.recover(directory: url)
/// for entry in recovery.entries { replay(entry) }
/// ```
///
/// - Note: Opening a journal always starts a new segment, so nothing is ever appended behind
///   a torn tail left by a crash. Open at most one `Journal` per directory at a time.
public final class Journal: Sendable {
    /// The directory holding the segment files.
    public let directory: URL
    /// The settings this journal was opened with.
    public var configuration: Configuration {
        Configuration(byteBudget: byteBudget, durability: durability, segmentHeader: segmentHeader.map { Data($0) })
    }

    private let byteBudget: Int
    private let durability: Durability
    /// The segment header as an array, not the configuration's `Data`: a `Data` of more than 14
    /// bytes keeps its storage behind an enum tag in the pointer's spare bits, which
    /// LeakSanitizer does not recognise as a reference, so a journal alive at exit (a session
    /// never shut down) would be reported as leaking its header in every sanitized host.
    private let segmentHeader: [UInt8]?

    let directoryPath: String
    let syscalls: Syscalls
    /// Copies of configuration values the append path reads, so it never touches the header `Data`.
    private let segmentLimit: Int
    private let maxEntrySize: Int
    private let syncsEachAppend: Bool
    /// Where small frames are assembled for a single `write(2)`; used only under the append lock.
    nonisolated(unsafe) private let scratch: UnsafeMutableRawBufferPointer
    private let state: Mutex<AppendState>
    private let reaper: SegmentReaper
    let preparer: SegmentPreparer

    /// A written entry `.fsync` must flush once the append lock is released.
    private struct PendingSync {
        var file: SegmentFile
        var sequence: UInt64
    }

    /// A live segment before the current one.
    private struct OlderSegment {
        var number: UInt64
        var path: String
        var bytes: Int
    }

    private struct AppendState {
        var segment: SegmentFile?
        var segmentBytes = 0
        var poisoned = false
        var closed = false
        /// The next segment was handed to the preparer: by the first append after a rotation
        /// (never the rotating one), or once the first segment is half full.
        var nextRequested = false
        /// Segments the last rotation dropped are queued with the reaper, whose timer the next
        /// preparation request arms off the append path.
        var drainPending = false
        /// Segments dropped by the last rotation, handed to the reaper once the rotating
        /// append's own write is done, so the unlink never races that write for the disk.
        var droppedSegments: [SegmentReaper.DroppedFile] = []
        /// The segment rotation left, carried to the background thread by the next preparation
        /// request: closing a written file costs the closer tens of microseconds.
        var retiredSegment: SegmentFile?
        /// Live segments before the current one, oldest first.
        var olderSegments: [OlderSegment] = []
        var nextNumber: UInt64
        var sequence: UInt64 = 0
        var statistics = Statistics()
    }

    /// Opens (creating when needed) the journal in `directory` and starts a new segment.
    ///
    /// - Parameters:
    ///   - directory: Where the segment files live; created with mode 0700 when missing.
    ///   - configuration: Budget, durability and segment header.
    /// - Throws: ``JournalError`` when the directory or the first segment cannot be created,
    ///   or the configuration cannot work.
    public convenience init(directory: URL, configuration: Configuration = Configuration()) throws {
        try self.init(directory: directory, configuration: configuration, syscalls: .live)
    }

    init(directory: URL, configuration: Configuration, syscalls: Syscalls) throws(JournalError) {
        try configuration.validate()
        let path = directory.path
        try SegmentDirectory.create(path, syscalls: syscalls)
        let existing = try SegmentDirectory.list(path)
        var initial = AppendState(nextNumber: (existing.last?.number ?? 0) + 1)
        initial.olderSegments = existing.map {
            OlderSegment(number: $0.number, path: $0.path, bytes: SegmentDirectory.fileSize($0.path))
        }
        var directoryDescriptor: Int32 = -1
        if configuration.durability == .fsync {
            switch syscalls.open(path, flags: O_RDONLY | O_DIRECTORY | O_CLOEXEC) {
            case .success(let descriptor): directoryDescriptor = descriptor
            case .failure(let failure): throw JournalError.directory(path, errno: failure.errno)
            }
        }
        self.directory = directory
        self.byteBudget = configuration.byteBudget
        self.durability = configuration.durability
        self.segmentHeader = configuration.segmentHeader.map { Array($0) }
        self.directoryPath = path
        self.syscalls = syscalls
        self.segmentLimit = configuration.segmentLimit
        self.maxEntrySize = configuration.maxEntrySize
        self.syncsEachAppend = configuration.durability == .fsync
        self.scratch = .allocate(byteCount: 4096, alignment: 16)
        let background = DispatchQueue(label: "JournalKit.segments")
        self.reaper = SegmentReaper(syscalls: syscalls, queue: background)
        self.preparer = SegmentPreparer(
            directoryPath: path, syscalls: syscalls,
            header: configuration.segmentHeader.map { Array($0) }, directoryDescriptor: directoryDescriptor)
        self.state = Mutex(initial)
        try state.withLock { state throws(JournalError) in try startSegment(&state) }
    }

    deinit { scratch.deallocate() }

    /// Appends one entry.
    ///
    /// Synchronous and callable from any thread; entries from concurrent callers are ordered
    /// and never interleave. When this returns, the entry survives the process being killed
    /// (and, with ``Durability/fsync``, power loss).
    ///
    /// - Parameter data: The entry, 1 byte up to a little under half the byte budget.
    /// - Throws: ``JournalError``. After `.shortWrite`, `.noSpace` or `.writeFailed` this entry
    ///   is lost but the journal is not: the next append starts a fresh segment. Appends write
    ///   after releasing the journal's lock, so after a short write (a disk filling up mid-frame)
    ///   an entry another thread was writing into the same segment at that moment may land
    ///   behind the torn frame, where recovery stops.
    public func append(_ data: Data) throws {
        // An untyped closure on purpose: a typed-throws one crashes the 6.3 compiler's IRGen
        // when Data.withUnsafeBytes reabstracts it.
        try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) throws -> Void in try append(bytes) }
    }

    /// Appends one entry from raw memory: the allocation-free fast path of ``append(_:)-(Data)``.
    ///
    /// - Parameter bytes: The entry's bytes; not retained after the call.
    /// - Throws: ``JournalError``, as ``append(_:)-(Data)`` does.
    public func append(_ bytes: UnsafeRawBufferPointer) throws(JournalError) {
        guard bytes.count > 0, bytes.count <= maxEntrySize else {
            throw JournalError(
                code: .invalidEntry,
                message: "an entry must hold 1 to \(maxEntrySize) bytes, not \(bytes.count); "
                    + "split it or raise byteBudget",
                path: directoryPath)
        }
        let header = Framing.header(for: bytes, kind: .entry)
        let admission = try state.withLock { state throws(JournalError) -> Admission in
            try admit(&state, header: header, payload: bytes)
        }
        switch admission {
        case .written(nil): return
        case .written(let pendingSync?): try sync(pendingSync.file, upTo: pendingSync.sequence)
        case .reserved(let file): try writeReserved(file, header: header, payload: bytes)
        }
    }

    /// What the append lock decided for one entry.
    private enum Admission {
        /// Written under the lock (a rotation, dropped segments to hand on, or `.fsync`), with
        /// what `.fsync` must flush once the lock is released.
        case written(PendingSync?)
        /// Room reserved in `file`: the caller writes the frame after releasing the lock.
        case reserved(SegmentFile)
    }

    /// Reserves room for a frame in the current segment, or writes it under the lock when the
    /// append must do more than write.
    ///
    /// An ordinary append holds the lock only to count its frame against the segment: the
    /// `write(2)` runs after the lock is released, so two threads' syscalls overlap as two
    /// raw writers' do, and a thread stalled in its write (a slow disk) holds no one up. The
    /// `O_APPEND` descriptor keeps every frame whole and apart, whatever order the writes land
    /// in. Three kinds of append still write under the lock: one that rotates (the new
    /// segment's first frame, then the dropped segments handed to the reaper once that write
    /// is done), the first one after opening (it hands the reaper what opening dropped), and
    /// every `.fsync` append, whose sequence numbers must follow file order so that one
    /// `fdatasync` can stand for the appends before it.
    @inline(__always)
    private func admit(
        _ state: inout AppendState, header: UInt64, payload: UnsafeRawBufferPointer
    ) throws(JournalError) -> Admission {
        let frameSize = Framing.headerSize + payload.count
        guard !syncsEachAppend, !state.closed, !state.poisoned, state.droppedSegments.isEmpty,
            let file = state.segment, state.segmentBytes + frameSize <= segmentLimit
        else { return .written(try appendLocked(&state, header: header, payload: payload)) }
        state.segmentBytes += frameSize
        state.sequence &+= 1
        state.statistics.appendedEntries &+= 1
        state.statistics.appendedBytes &+= frameSize
        requestNextSegmentIfDue(&state)
        return .reserved(file)
    }

    /// Writes a frame `admit` reserved room for, outside the lock. A failed or short write
    /// poisons the segment, if it is still the current one, and takes the entry back out of
    /// the statistics.
    private func writeReserved(
        _ file: SegmentFile, header: UInt64, payload: UnsafeRawBufferPointer
    ) throws(JournalError) {
        let expected = Framing.headerSize + payload.count
        // The append lock's scratch buffer is not ours here: a frame that fits is assembled
        // on the stack, so the write stays one syscall without allocating.
        let outcome = withUnsafeTemporaryAllocation(byteCount: Self.stackFrameLimit, alignment: 16) { stack in
            withUnsafeBytes(of: header) { header in
                syscalls.writeFrame(file.descriptor, header: header, payload: payload, scratch: stack)
            }
        }
        let failure: JournalError
        switch outcome {
        case .success(let written) where written == expected: return
        case .success(let written):
            failure = JournalError.shortWrite(file.path, written: written, expected: expected)
        case .failure(let error):
            failure = JournalError.write(file.path, errno: error.errno)
        }
        state.withLock { state in
            state.statistics.appendedEntries &-= 1
            state.statistics.appendedBytes &-= expected
            if state.segment === file && !state.poisoned { poison(&state) }
        }
        throw failure
    }

    /// Frames up to this size are assembled on the stack by an append writing outside the lock.
    static let stackFrameLimit = 1024

    /// Closes the journal: later appends throw `.closed`; pending segment deletions are retried
    /// once more and waited for. Idempotent: each further call retries deletions that failed.
    public func close() {
        // The descriptor closes when the last reference goes, outside the lock.
        let (file, firstUnused, dropped) = state.withLock {
            state -> (SegmentFile?, UInt64, [SegmentReaper.DroppedFile]) in
            state.closed = true
            let file = state.segment
            let dropped = state.droppedSegments
            state.segment = nil
            state.retiredSegment = nil
            state.droppedSegments = []
            return (file, state.nextNumber, dropped)
        }
        _ = file
        preparer.discard(firstUnused: firstUnused)
        // Segments dropped when this journal was opened, if it never appended.
        if !dropped.isEmpty { reaper.drop(dropped) }
        reaper.flush()
    }

    /// Counters describing what this journal has done, for diagnostics and tests.
    public var statistics: Statistics {
        let reaped = reaper.counts
        return state.withLock { state in
            var statistics = state.statistics
            statistics.segmentsFreed = reaped.freed
            statistics.pendingUnlinks = reaped.pending
            statistics.pendingUnlinkBytes = reaped.pendingBytes
            statistics.failedUnlinkAttempts = reaped.failedAttempts
            statistics.currentSegment = state.segment?.number ?? 0
            return statistics
        }
    }

    /// Writes one frame under the lock; returns what `.fsync` must flush after the lock is released.
    @inline(__always)
    private func appendLocked(
        _ state: inout AppendState, header: UInt64, payload: UnsafeRawBufferPointer
    ) throws(JournalError) -> PendingSync? {
        guard !state.closed else {
            throw JournalError(
                code: .closed, message: "the journal was closed; open a new Journal to append", path: directoryPath)
        }
        let frameSize = Framing.headerSize + payload.count
        let rotating = state.poisoned || state.segment == nil || state.segmentBytes + frameSize > segmentLimit
        if rotating { try startSegment(&state) }
        guard let file = state.segment else { return nil }
        if let failure = write(file, header: header, payload: payload, state: &state) { throw failure }
        state.sequence &+= 1
        state.statistics.appendedEntries &+= 1
        state.statistics.appendedBytes &+= frameSize
        file.markWritten(state.sequence)
        if !state.droppedSegments.isEmpty {
            // Counted as pending at once, so statistics stay honest; deleted later.
            if reaper.enqueue(state.droppedSegments) { state.drainPending = true }
            state.droppedSegments.removeAll()
        }
        if !rotating { requestNextSegmentIfDue(&state) }
        return syncsEachAppend ? PendingSync(file: file, sequence: state.sequence) : nil
    }

    /// One write(2) or writev(2) of a whole frame; any failure poisons the segment and is returned.
    @inline(__always)
    private func write(
        _ file: SegmentFile, header: UInt64, payload: UnsafeRawBufferPointer, state: inout AppendState
    ) -> JournalError? {
        let expected = Framing.headerSize + payload.count
        let outcome = withUnsafeBytes(of: header) { header in
            syscalls.writeFrame(file.descriptor, header: header, payload: payload, scratch: scratch)
        }
        switch outcome {
        case .success(let written) where written == expected:
            state.segmentBytes += written
            return nil
        case .success(let written):
            state.segmentBytes += written
            poison(&state)
            return JournalError.shortWrite(file.path, written: written, expected: expected)
        case .failure(let failure):
            poison(&state)
            return JournalError.write(file.path, errno: failure.errno)
        }
    }

    private func poison(_ state: inout AppendState) {
        state.poisoned = true
        state.statistics.poisonedSegments += 1
    }

    /// Hands the next segment to the preparer once per segment: after a rotation (a retired
    /// descriptor or dropped segments to pass on), or once the first segment is half full.
    @inline(__always)
    private func requestNextSegmentIfDue(_ state: inout AppendState) {
        guard !state.nextRequested,
            state.retiredSegment != nil || state.drainPending || state.segmentBytes >= segmentLimit / 2
        else { return }
        requestNextSegment(&state)
    }

    /// Wakes the background thread once per segment, from the append after a rotation (the
    /// rotating append itself never waits for a wake-up): it closes the retired descriptor,
    /// arms the reaper's timer for the dropped segments, and makes the next segment ready, with
    /// a whole segment's time to do it.
    private func requestNextSegment(_ state: inout AppendState) {
        state.nextRequested = true
        let retired = state.retiredSegment
        state.retiredSegment = nil
        let drain = state.drainPending
        state.drainPending = false
        var work: (@Sendable () -> Void)?
        if drain {
            let reaper = self.reaper
            work = { reaper.scheduleDrain() }
        }
        preparer.prepare(state.nextNumber, releasing: retired, then: work)
    }

    /// Starts the next segment, and drops the oldest segments beyond the budget.
    ///
    /// Takes the segment the preparer made ready (created, header written, synced for
    /// `.fsync`), so rotation only swaps descriptors; when it is not ready, creates the file
    /// and writes its header here.
    private func startSegment(_ state: inout AppendState) throws(JournalError) {
        let number = state.nextNumber
        let file: SegmentFile
        var headerBytes = 0
        if let prepared = preparer.take(number) {
            file = SegmentFile(
                number: number, descriptor: prepared.descriptor, path: prepared.path, syscalls: syscalls,
                directoryNeedsSync: false)
            headerBytes = prepared.bytes
        } else {
            let path = SegmentDirectory.path(in: directoryPath, number: number)
            switch Self.createSegment(path, syscalls: syscalls) {
            case .success(let descriptor):
                file = SegmentFile(
                    number: number, descriptor: descriptor, path: path, syscalls: syscalls,
                    directoryNeedsSync: durability == .fsync)
            case .failure(let failure): throw JournalError.segment(path, errno: failure.errno, action: "create")
            }
        }
        state.nextNumber = number + 1
        if let previous = state.segment {
            state.olderSegments.append(
                OlderSegment(number: previous.number, path: previous.path, bytes: state.segmentBytes))
            state.retiredSegment = previous
        }
        state.segment = file
        state.segmentBytes = headerBytes
        state.poisoned = false
        state.statistics.segmentsCreated += 1
        state.nextRequested = false
        dropOldest(&state)
        if headerBytes == 0, let segmentHeader {
            // withUnsafeBytes rethrows untyped errors, so the failure is carried out as a value.
            let failure = segmentHeader.withUnsafeBytes { payload in
                write(file, header: Framing.header(for: payload, kind: .segmentHeader), payload: payload, state: &state)
            }
            if let failure { throw failure }
        }
    }

    /// Flags of every segment descriptor: appends only, never inherited by child processes.
    static let segmentFlags = O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC

    /// Creates a segment file; when the preparer created it a moment ago (it is still empty),
    /// opens that file instead.
    private static func createSegment(_ path: String, syscalls: Syscalls) -> Result<Int32, SyscallError> {
        let created = syscalls.open(path, flags: segmentFlags | O_EXCL)
        guard case .failure(let failure) = created, failure.errno == EEXIST, SegmentDirectory.fileSize(path) == 0
        else { return created }
        return syscalls.open(path, flags: segmentFlags)
    }

    /// Hands the oldest segments to the reaper until the older ones fit the budget beside a
    /// full current segment and the header the preparer writes into the next one.
    private func dropOldest(_ state: inout AppendState) {
        let allowance = byteBudget - segmentLimit - (segmentHeader.map { Framing.headerSize + $0.count } ?? 0)
        var olderBytes = state.olderSegments.reduce(0) { $0 + $1.bytes }
        var dropped: [SegmentReaper.DroppedFile] = []
        while olderBytes > allowance, !state.olderSegments.isEmpty {
            let oldest = state.olderSegments.removeFirst()
            olderBytes -= oldest.bytes
            dropped.append(SegmentReaper.DroppedFile(path: oldest.path, bytes: oldest.bytes))
        }
        guard !dropped.isEmpty else { return }
        state.statistics.segmentsDropped += dropped.count
        state.droppedSegments += dropped
    }

    /// Makes the entry with `sequence` durable without holding the append lock.
    private func sync(_ file: SegmentFile, upTo sequence: UInt64) throws(JournalError) {
        if file.directoryNeedsSync.load(ordering: .acquiring) {
            if case .failure(let failure) = syscalls.fsync(preparer.directoryDescriptor) {
                throw JournalError.sync(directoryPath, errno: failure.errno)
            }
            file.directoryNeedsSync.store(false, ordering: .releasing)
        }
        if case .failure(let failure) = file.sync(upTo: sequence) {
            throw JournalError.sync(file.path, errno: failure.errno)
        }
    }
}
