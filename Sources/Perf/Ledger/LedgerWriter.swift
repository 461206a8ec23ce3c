// Appends ledger lines with one write(2) each, rotates at the cap and reports its own gaps.
import Foundation
import Glibc
import Synchronization

/// Appends events to `perf-events.jsonl`, one line per `write(2)`, safe from any thread.
///
/// The file is opened once with `O_WRONLY|O_APPEND|O_CREAT|O_CLOEXEC` (mode `0600`) and its
/// size is tracked in memory from `fstat` at open, so an append costs one encode and one
/// syscall. Concurrent appenders never interleave: each line is one `write(2)` on an
/// append-mode descriptor. When a line would take the file past the cap, the appender that
/// noticed renames it to `perf-events.jsonl.prev` (replacing the old one) and swaps in a new
/// descriptor; the rename happens outside the lock the append path takes, appenders whose
/// lines still fit keep writing to the old descriptor meanwhile, and no line is ever split
/// across the two files, which both stay within the cap. A rotation that fails deletes nothing:
/// lines go on past the cap up to twice the cap, attempts back off (1, 2, 4 … 64 lines or 10 ms).
///
/// A line that cannot be written (disk full, short write, file or directory gone) is counted
/// as dropped; the writer reopens the file and the next line that succeeds is preceded by a
/// `dropped` line carrying the count, so readers see the gap (at ``close()``, a last one). The
/// first failed write and the first failed rotation are each said once on stderr.
///
/// ```swift
/// let writer = try LedgerWriter(directory: dataDirectory)
/// try writer.append(event)   // in the page cache when this returns: survives SIGKILL
/// ```
///
/// - Note: A file deleted under the writer is noticed by a link-count check every
///   ``deletionCheckInterval`` lines; the lines written since the previous check are counted
///   as dropped.
package final class LedgerWriter: Sendable {
    /// The ledger's file name inside the data directory.
    package static let fileName = "perf-events.jsonl"
    /// The rotated file's name inside the data directory.
    package static let previousFileName = "perf-events.jsonl.prev"
    /// The default cap of each file: 512 KiB.
    package static let defaultCapBytes = 512 * 1024
    /// The `cause` of the `dropped` lines the writer writes for lines it could not write itself
    /// (a failed write, a line over the cap, rotation failing past twice the cap, a deleted file).
    package static let writeCause = "write"
    /// How many lines pass between checks that the file is still linked.
    package static let deletionCheckInterval = 64

    /// Counters since the writer was created.
    package struct Statistics: Sendable, Equatable {
        /// Lines written, gap reports included.
        package var linesWritten: Int
        /// Bytes written, newlines included.
        package var bytesWritten: Int
        /// Times the file was renamed to `.prev`.
        package var rotations: Int
        /// Lines that could not be written.
        package var droppedLines: Int
        /// `dropped` lines written to report gaps.
        package var gapReports: Int
        /// `write(2)` calls that wrote whole lines: one per line from ``append(_:)``, one per run
        /// of lines from a batch.
        package var writeCalls: Int = 0
    }

    /// The ledger file's path.
    package let path: String
    /// The rotated file's path.
    package let previousPath: String
    /// The size at which the file rotates.
    package let capBytes: Int

    let directoryPath: String
    let syscalls: FileSyscalls
    /// Shared with every other process appending to this directory; nil when it could not be
    /// mapped (then this writer counts the file's size alone, as a single process may).
    let shared: LedgerSharedState?
    let state: Mutex<State>
    /// Serialises the replacement of the descriptor (rotation, reopen after a failure). Only
    /// appenders that need a new file wait on it; it is held across rename and open, never
    /// taken by an append whose line fits.
    let replacementLock = Mutex<Void>(())
    private let buffers = Mutex<[[UInt8]]>([])
    let linesWritten = Atomic<Int>(0)
    let bytesWritten = Atomic<Int>(0)
    let rotations = Atomic<Int>(0)
    private let droppedLines = Atomic<Int>(0)
    let gapReports = Atomic<Int>(0)
    let writeCalls = Atomic<Int>(0)

    struct State: ~Copyable {
        /// nil after a failure: the next append reopens.
        var descriptor: LedgerDescriptor?
        /// Bytes reserved in the file (without shared state; with it, the shared word counts).
        var size: Int
        /// Bumped whenever `descriptor` changes, so two appenders do not both rotate.
        var generation: UInt64
        /// The shared generation `descriptor` belongs to: when the shared word moves on, another
        /// process replaced the file and this one reopens the path rather than rotate again.
        var sharedGeneration: UInt64
        /// Lines lost since the last gap report.
        var pendingDropped: Int
        var closed: Bool
        /// While rotation fails: appends past the cap before the next attempt (0: rotate when full).
        var rotationRetryIn = 0
        /// The last wait between rotation attempts, in appends (0 while rotation works).
        var rotationBackoff = 0
        /// The errno of the last failed rotation.
        var rotationErrno: Int32 = 0
        /// When the last rotation failed (``monotonicNanos``).
        var rotationFailedNanos: UInt64 = 0
        /// Session and time of the newest line, for the gap report written at close.
        var lastSession = ""
        var lastTimestampMs: Int64 = 0
    }

    /// Where a persistent problem is said, once per kind (stderr, from the public initialiser).
    let report: @Sendable (String) -> Void
    /// The kinds of problem already reported (``Problem`` bits).
    let reported = Atomic<UInt8>(0)
    /// A monotonic clock, read only while rotation is failing (to bound the back-off in time).
    let monotonicNanos: @Sendable () -> UInt64

    /// Opens (or creates) `perf-events.jsonl` in `directory`.
    ///
    /// - Parameters:
    ///   - directory: The data directory; it must exist.
    ///   - capBytes: The size at which the file rotates to `.prev`; default 512 KiB.
    /// - Throws: ``LedgerError`` with code `.open` if the file cannot be opened.
    package convenience init(directory: URL, capBytes: Int = LedgerWriter.defaultCapBytes) throws(LedgerError) {
        try self.init(
            directory: directory, capBytes: capBytes, syscalls: FileSyscalls(), report: PerfState.reportToStandardError)
    }

    init(
        directory: URL, capBytes: Int, syscalls: FileSyscalls,
        report: @escaping @Sendable (String) -> Void = PerfState.reportToStandardError,
        monotonicNanos: @escaping @Sendable () -> UInt64 = LedgerWriter.coarseMonotonicNanos
    ) throws(LedgerError) {
        self.report = report
        self.monotonicNanos = monotonicNanos
        self.directoryPath = directory.path
        self.path = directory.appendingPathComponent(LedgerWriter.fileName).path
        self.previousPath = directory.appendingPathComponent(LedgerWriter.previousFileName).path
        self.capBytes = max(1, capBytes)
        self.syscalls = syscalls
        let shared = LedgerSharedState.open(directory: directory.path, syscalls: syscalls)
        self.shared = shared
        shared?.lock()
        defer { shared?.unlock() }
        let opened: OpenedFile
        switch Self.openFile(path: path, syscalls: syscalls) {
        case .success(let value): opened = value
        case .failure(let error): throw error
        }
        let sharedGeneration = shared.map { Self.join($0, opened, replacing: false) } ?? 0
        state = Mutex(
            State(
                descriptor: opened.descriptor, size: opened.size, generation: 0, sharedGeneration: sharedGeneration,
                pendingDropped: 0, closed: false))
    }

    /// Encodes `event` and appends it with one `write(2)`.
    ///
    /// When this returns, the line is in the kernel's page cache and survives the process
    /// being killed. On failure the line is counted as dropped and reported by the next line
    /// that succeeds.
    ///
    /// - Throws: ``LedgerError``: `.write`, `.shortWrite`, `.open`, `.rotate`,
    ///   `.lineTooLong` or `.closed`. The facade swallows these: a host program never fails
    ///   because of its instrumentation.
    package func append(_ event: LedgerEvent) throws(LedgerError) {
        var line = takeBuffer()
        defer { returnBuffer(line) }
        LedgerEncoder.encodeLine(event, into: &line)
        guard line.count <= capBytes else {
            recordDrop(1)
            throw .lineTooLong(path: path, bytes: line.count, cap: capBytes)
        }
        try appendLines(line[...], count: 1, session: event.session, timestampMs: event.timestampMs)
    }

    /// The most bytes one `write(2)` of ``append(batch:)`` carries (and never more than the cap).
    static let batchBytes = 256 * 1024

    /// Appends `events` in order with as few `write(2)`s as the cap allows: lines are gathered into
    /// runs of up to ``batchBytes`` (and the cap), each written whole with one call, so a run never
    /// straddles a rotation and every line stays whole in one file.
    ///
    /// - Returns: How many of the events were not written (each counted as dropped, and reported
    ///   by the next `dropped` line, as ``append(_:)`` does).
    func append(batch events: [LedgerEvent]) -> Int {
        var buffer = takeBuffer()
        defer { returnBuffer(buffer) }
        let runLimit = min(capBytes, Self.batchBytes)
        var failed = 0
        var lines = 0
        var last: LedgerEvent?
        func flush(upTo end: Int) {
            guard lines > 0, let last else { return }
            do throws(LedgerError) {
                try appendLines(buffer[..<end], count: lines, session: last.session, timestampMs: last.timestampMs)
            } catch {
                failed += lines
            }
            lines = 0
        }
        for event in events {
            let start = buffer.count
            LedgerEncoder.encodeLine(event, into: &buffer)
            let length = buffer.count - start
            guard length <= capBytes else {
                buffer.removeSubrange(start...)
                recordDrop(1)
                failed += 1
                continue
            }
            if buffer.count > runLimit, lines > 0 {
                flush(upTo: start)
                buffer.removeSubrange(..<start)
            }
            lines += 1
            last = event
        }
        flush(upTo: buffer.count)
        return failed
    }

    /// Reserves room for `count` whole lines (`bytes`, at most the cap) and writes them with one
    /// `write(2)`, rotating or reopening first when need be; `session` and `timestampMs` are the
    /// newest line's.
    func appendLines(
        _ bytes: ArraySlice<UInt8>, count: Int, session: String, timestampMs: Int64
    ) throws(LedgerError) {
        while true {
            switch reserve(lineBytes: bytes.count, session: session, timestampMs: timestampMs) {
            case .closed:
                recordDrop(count)
                throw .closed(path: path)
            case .replace(let generation, let rotate):
                if let error = replaceDescriptor(expectedGeneration: generation, rotate: rotate) {
                    recordDrop(count)
                    reportFailure(error)
                    throw error
                }
            case .overCeiling(let errno):
                recordDrop(count)
                throw .rotate(path: path, errno: errno)
            case .write(let descriptor, let gapLine, let gapCount, let generation):
                try write(
                    bytes, lines: count, after: gapLine, gapCount: gapCount, to: descriptor, reservedIn: generation)
                return
            }
        }
    }

    /// The counters so far.
    package var statistics: Statistics {
        Statistics(
            linesWritten: linesWritten.load(ordering: .relaxed),
            bytesWritten: bytesWritten.load(ordering: .relaxed),
            rotations: rotations.load(ordering: .relaxed),
            droppedLines: droppedLines.load(ordering: .relaxed),
            gapReports: gapReports.load(ordering: .relaxed), writeCalls: writeCalls.load(ordering: .relaxed))
    }

    /// Stops writing; later appends throw `.closed`. The descriptor closes once in-flight
    /// appends finish.
    ///
    /// Lines still counted as dropped are reported first, in a last `dropped` line written past
    /// the cap if need be (one line), so a gap at the end of a session is not silent.
    package func close() {
        writeFinalGapReport()
        state.withLock {
            $0.closed = true
            $0.descriptor = nil
        }
    }

    enum Reservation {
        case closed
        case replace(generation: UInt64, rotate: Bool)
        /// Rotation is failing and the file has reached ``ceilingBytes``: the line is counted.
        case overCeiling(errno: Int32)
        /// `generation`: the shared generation the room was reserved in.
        case write(LedgerDescriptor, gapLine: [UInt8]?, gapCount: Int, generation: UInt64)
    }

    /// Claims room for the line in the current file under the state lock: no syscall here.
    private func reserve(lineBytes: Int, session: String, timestampMs: Int64) -> Reservation {
        state.withLock { state in
            if state.closed { return .closed }
            state.lastSession = session
            state.lastTimestampMs = timestampMs
            guard let descriptor = state.descriptor else {
                return .replace(generation: state.generation, rotate: false)
            }
            var gapLine: [UInt8]?
            var total = lineBytes
            if state.pendingDropped > 0 {
                // Rare: only after a failure. The gap report rides in the same write(2); it
                // waits for a line it fits beside, so even a fresh file stays within the cap.
                var gap = LedgerEvent(
                    kind: .dropped, name: "ledger", session: session, timestampMs: timestampMs)
                gap.count = state.pendingDropped
                gap.extra["cause"] = .string(LedgerWriter.writeCause)
                var bytes: [UInt8] = []
                LedgerEncoder.encodeLine(gap, into: &bytes)
                if lineBytes + bytes.count <= capBytes {
                    total += bytes.count
                    gapLine = bytes
                }
            }
            // While rotation fails (backing off), lines go on past the cap up to the ceiling.
            var pastCap = false
            if let shared {
                // Room is reserved in the shared word, and only in the generation this descriptor
                // belongs to: a line is counted against the file it lands in.
                var word = shared.word
                while true {
                    guard LedgerSharedState.generation(word) == state.sharedGeneration else {
                        return .replace(generation: state.generation, rotate: false)
                    }
                    let size = LedgerSharedState.size(word)
                    if size + total > capBytes, size > 0 {
                        if let refusal = full(size: size + total, &state) { return refusal }
                        pastCap = true
                    }
                    if shared.reserve(total, from: word) { break }
                    word = shared.word
                }
            } else {
                if state.size + total > capBytes, state.size > 0 {
                    if let refusal = full(size: state.size + total, &state) {
                        return refusal
                    }
                    pastCap = true
                }
                state.size += total
            }
            if pastCap { state.rotationRetryIn -= 1 }
            let gapCount = gapLine == nil ? 0 : state.pendingDropped
            state.pendingDropped -= gapCount
            return .write(descriptor, gapLine: gapLine, gapCount: gapCount, generation: state.sharedGeneration)
        }
    }

    private func write(
        _ run: ArraySlice<UInt8>, lines count: Int, after gapLine: [UInt8]?, gapCount: Int,
        to descriptor: LedgerDescriptor, reservedIn generation: UInt64
    ) throws(LedgerError) {
        // Without a gap report (the steady state) the run is written where it lies: no copy.
        let bytes = gapLine.map { $0[...] + run } ?? run
        let result = bytes.withUnsafeBytes { syscalls.write(descriptor.fd, $0) }
        switch result {
        case .success(let written) where written == bytes.count:
            let lines = count + (gapLine == nil ? 0 : 1)
            writeCalls.add(1, ordering: .relaxed)
            linesWritten.add(lines, ordering: .relaxed)
            bytesWritten.add(written, ordering: .relaxed)
            if gapLine != nil { gapReports.add(1, ordering: .relaxed) }
            if let shared, LedgerSharedState.generation(shared.word) &- generation >= 2 {
                // Two rotations between this line's reservation and its write (a writer descheduled
                // that long): its file may already be deleted. Then the line is lost; say so.
                if let info = syscalls.fstat(descriptor.fd), info.links == 0 { recordDrop(lines) }
            }
            let total = descriptor.linesWritten.add(lines, ordering: .relaxed).newValue
            if total / LedgerWriter.deletionCheckInterval != (total - lines) / LedgerWriter.deletionCheckInterval {
                checkStillLinked(descriptor, linesSoFar: total)
            }
        case .success(let written):
            fail(descriptor, lost: count + gapCount, lines: count)
            let error = LedgerError.shortWrite(path: path, wrote: written, of: bytes.count)
            reportFailure(error)
            throw error
        case .failure(let errno):
            fail(descriptor, lost: count + gapCount, lines: count)
            let error = LedgerError.write(path: path, errno: errno)
            reportFailure(error)
            throw error
        }
    }

    /// A write failed: count the loss (the gap report's own count is restored) and make the
    /// next append reopen, which also terminates any half-written line.
    private func fail(_ descriptor: LedgerDescriptor, lost: Int, lines: Int) {
        state.withLock { state in
            state.pendingDropped += lost
            if state.descriptor === descriptor {
                state.descriptor = nil
                state.generation &+= 1
            }
        }
        droppedLines.add(lines, ordering: .relaxed)
    }

    func recordDrop(_ count: Int) {
        state.withLock { $0.pendingDropped += count }
        droppedLines.add(count, ordering: .relaxed)
    }

    /// Writes to an unlinked file succeed and vanish; a periodic link count catches that.
    private func checkStillLinked(_ descriptor: LedgerDescriptor, linesSoFar: Int) {
        guard let info = syscalls.fstat(descriptor.fd) else { return }
        let verified = descriptor.linesVerified.exchange(linesSoFar, ordering: .relaxed)
        guard info.links == 0 else { return }
        let lost = max(0, linesSoFar - verified)
        let current = state.withLock { state in
            guard state.descriptor === descriptor else { return false }
            state.descriptor = nil
            state.generation &+= 1
            state.pendingDropped += lost
            return true
        }
        if current { droppedLines.add(lost, ordering: .relaxed) }
    }

    /// A line buffer with capacity from earlier appends: the steady state allocates nothing.
    /// It is emptied here, where the pool's reference is the only one, so no copy is made.
    private func takeBuffer() -> [UInt8] {
        if var buffer = buffers.withLock({ $0.popLast() }) {
            buffer.removeAll(keepingCapacity: true)
            return buffer
        }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1024)
        return buffer
    }

    private func returnBuffer(_ buffer: [UInt8]) {
        buffers.withLock { pool in
            if pool.count < 4 { pool.append(buffer) }
        }
    }
}

extension LedgerWriter {
    /// Appends `event`'s line (keys sorted, `\n`-terminated) to `buffer`: the encoding `append`
    /// writes, for benchmarks and tools that write lines elsewhere.
    ///
    /// - Parameters:
    ///   - event: The event to encode.
    ///   - buffer: Receives the bytes; its existing contents are kept.
    package static func encode(_ event: LedgerEvent, into buffer: inout [UInt8]) {
        LedgerEncoder.encodeLine(event, into: &buffer)
    }
}
