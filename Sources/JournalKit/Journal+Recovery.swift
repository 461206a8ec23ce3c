// Recovery: reads every segment in order, validates each frame, and reports what it could not
// preserve instead of throwing over a torn tail.
import Foundation
import Glibc

extension Journal {
    /// What recovery found in a journal directory.
    public struct Recovery: Sendable {
        /// Every valid entry, oldest first (segment headers excluded).
        public var entries: [Data]
        /// The header of each surviving segment that has one, oldest first.
        public var headers: [Data]
        /// A segment ended in a partial or corrupt frame (a write cut by a crash, a short
        /// write, or damage); recovery stopped that segment there and dropped the rest of it.
        public var tornTail: Bool
        /// Entries older than the first surviving one are gone: dropped by rotation (including
        /// segments a journal's reaper unlinked while recovery was reading the directory), or
        /// lost in a gap between segment numbers.
        public var droppedOlderEntries: Bool
        /// Segment numbers are not consecutive: a segment in the middle is missing.
        public var gapDetected: Bool
        /// Segments read.
        public var segmentCount: Int
        /// Segments that stopped at a bad frame.
        public var tornSegmentCount: Int
        /// Bytes read from segment files.
        public var bytesRead: Int
        /// Bytes after the first bad frame of each torn segment, summed.
        public var bytesDiscarded: Int

        /// Creates an empty recovery.
        public init() {
            entries = []
            headers = []
            tornTail = false
            droppedOlderEntries = false
            gapDetected = false
            segmentCount = 0
            tornSegmentCount = 0
            bytesRead = 0
            bytesDiscarded = 0
        }
    }

    /// Reads every entry that survives in `directory`.
    ///
    /// Segments are read oldest first; each is validated frame by frame (length, then CRC)
    /// and stops at its first bad frame. A torn tail, a zero-filled tail or a corrupt frame is
    /// reported through the result, never thrown. A missing directory is an empty journal.
    ///
    /// The directory may still be changing: a journal's reaper goes on unlinking the segments
    /// rotation dropped (oldest first) after the journal is gone. A listed segment that has
    /// vanished by the time it is opened was dropped, and so was everything older: recovery
    /// returns only the segments after it and reports `droppedOlderEntries`, the same answer it
    /// gives once the reaper has finished, never a hole in the middle.
    ///
    /// - Parameter directory: The journal's directory.
    /// - Returns: The entries, headers and what could not be preserved.
    /// - Throws: ``JournalError`` only when an existing segment cannot be read at all
    ///   (permissions, I/O error).
    public static func recover(directory: URL) throws -> Recovery {
        try recover(directory: directory, syscalls: .live)
    }

    static func recover(directory: URL, syscalls: Syscalls) throws(JournalError) -> Recovery {
        var recovery = Recovery()
        let segments = try SegmentDirectory.list(directory.path)
        // The first segment read, and the previous one, of the run of segments kept.
        var first: UInt64?
        var previous: UInt64?
        // Listed segments that were gone when opened, since the last segment read.
        var vanished = false
        // Segments read before a vanished one: dropped, their entries discarded.
        var droppedWhileReading = false
        for segment in segments {
            guard let buffer = try readWholeFile(segment.path, syscalls: syscalls) else {
                vanished = true
                continue
            }
            if vanished {
                // Only the reaper unlinks a segment with newer ones behind it, and it unlinks
                // oldest first: every older segment is dropped too, whether or not it was still
                // there to read. Keeping what was read of them would leave a hole where the
                // vanished segments were.
                recovery = Recovery()
                first = nil
                previous = nil
                vanished = false
                droppedWhileReading = true
            }
            if let previous, segment.number != previous + 1 { recovery.gapDetected = true }
            if first == nil { first = segment.number }
            previous = segment.number
            recovery.segmentCount += 1
            recovery.bytesRead += buffer.count
            scan(buffer, into: &recovery)
        }
        // Segments that vanished after the last one read are not drops (rotation drops the
        // oldest): an unused prepared segment that `close()` deleted, or a journal being removed.
        recovery.droppedOlderEntries = droppedWhileReading || (first ?? 1) > 1 || recovery.gapDetected
        return recovery
    }

    /// Appends the valid frames of one segment to `recovery`.
    ///
    /// Entries larger than a few cache lines are not copied: each `Data` points into the
    /// segment's buffer and keeps it alive, which spares recovery a second pass over memory
    /// (copying every entry cost more than validating it).
    static func scan(_ segment: SegmentBuffer, into recovery: inout Recovery) {
        let buffer = UnsafeRawBufferPointer(start: segment.base, count: segment.count)
        guard let base = buffer.baseAddress else { return }
        var offset = 0
        while let frame = Framing.decode(buffer, at: offset, allowHeader: offset == 0) {
            let payload: Data
            if frame.payloadCount <= SegmentBuffer.copyThreshold {
                payload = Data(bytes: base + frame.payloadOffset, count: frame.payloadCount)
            } else {
                payload = Data(
                    bytesNoCopy: UnsafeMutableRawPointer(mutating: base + frame.payloadOffset),
                    count: frame.payloadCount, deallocator: .custom { _, _ in withExtendedLifetime(segment) {} })
            }
            switch frame.kind {
            case .entry: recovery.entries.append(payload)
            case .segmentHeader: recovery.headers.append(payload)
            }
            offset = frame.end
        }
        if offset < buffer.count {
            recovery.tornTail = true
            recovery.tornSegmentCount += 1
            recovery.bytesDiscarded += buffer.count - offset
        }
    }

    /// The whole file in one buffer: recovery validates from memory, not through small reads.
    ///
    /// - Returns: The bytes, or nil when the file no longer exists (unlinked since it was listed).
    static func readWholeFile(_ path: String, syscalls: Syscalls) throws(JournalError) -> SegmentBuffer? {
        let descriptor: Int32
        switch syscalls.open(path, flags: O_RDONLY | O_CLOEXEC) {
        case .success(let opened): descriptor = opened
        case .failure(let failure) where failure.errno == ENOENT: return nil
        case .failure(let failure): throw JournalError.segment(path, errno: failure.errno, action: "open")
        }
        defer { syscalls.close(descriptor) }
        let size: Int
        switch syscalls.size(of: descriptor) {
        case .success(let value): size = value
        case .failure(let failure): throw JournalError.segment(path, errno: failure.errno, action: "read")
        }
        let buffer = SegmentBuffer(capacity: size)
        // A file that shrank since fstat ends the loop early; one that grew is read up to `size`.
        while buffer.count < size {
            let rest = UnsafeMutableRawBufferPointer(start: buffer.base + buffer.count, count: size - buffer.count)
            switch syscalls.read(descriptor, into: rest) {
            case .success(0): return buffer
            case .success(let count): buffer.count += count
            case .failure(let failure): throw JournalError.segment(path, errno: failure.errno, action: "read")
            }
        }
        return buffer
    }
}

/// One segment file's bytes, shared by the entries recovery returns from it.
final class SegmentBuffer: @unchecked Sendable {
    /// Entries up to this size are copied: a copy is cheaper than sharing the buffer.
    static let copyThreshold = 256

    let base: UnsafeMutableRawPointer
    /// Bytes filled. Written only while the file is read, before the buffer is shared.
    var count = 0

    init(capacity: Int) {
        base = UnsafeMutableRawPointer.allocate(byteCount: max(capacity, 1), alignment: 16)
    }

    deinit { base.deallocate() }
}
