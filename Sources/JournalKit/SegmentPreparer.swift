// Makes the next segment ready ahead of time, off the append path: creating a file on ext4
// costs tens of microseconds (more on a busy disk), and so does the first write into a new
// inode (its header), both of which would otherwise land on the append that rotates.
import Glibc
import Synchronization

/// Creates `segment-<n>` on the journal's background thread, header written (and, for `.fsync`, synced
/// with its directory entry), so that rotation only swaps descriptors.
///
/// A prepared segment holds nothing but its header, and recovery reads it as a surviving
/// segment with a header and no entries, so a crash with a prepared file on disk loses
/// nothing, returns no spurious entry and leaves no gap; the next journal numbers after it.
///
/// Preparation and rotation never touch the same file at once: the preparer works on the file
/// only while it holds `slot` and sees its own request there, and ``take(_:)`` either takes
/// the ready segment or withdraws the request (waiting, through the lock, for work already
/// under way), after which the appender creates the file itself.
final class SegmentPreparer: Sendable {
    /// A created segment file, header written.
    struct Prepared {
        var number: UInt64
        var descriptor: Int32
        var path: String
        /// Bytes already in the file (the header frame).
        var bytes: Int
    }

    private enum Slot {
        case idle
        /// Segment `number` was asked for and is not ready yet.
        case requested(UInt64)
        case ready(Prepared)
    }

    private let slot = Mutex(Slot.idle)
    private let worker = BackgroundThread(name: "JournalKit.prepare")
    private let directoryPath: String
    private let syscalls: Syscalls
    private let header: [UInt8]?
    /// The directory, open for `fsync` after a segment is created (`.fsync` only; else -1).
    /// Owned here, so background work never syncs a descriptor the journal already closed.
    let directoryDescriptor: Int32

    init(directoryPath: String, syscalls: Syscalls, header: [UInt8]?, directoryDescriptor: Int32) {
        self.directoryPath = directoryPath
        self.syscalls = syscalls
        self.header = header
        self.directoryDescriptor = directoryDescriptor
    }

    deinit {
        worker.stop()
        if case .ready(let prepared) = slot.withLock({ $0 }) { syscalls.close(prepared.descriptor) }
        if directoryDescriptor >= 0 { syscalls.close(directoryDescriptor) }
    }

    /// Whether a ready segment is waiting to be taken (for tests).
    var readyNumber: UInt64? {
        slot.withLock { slot in
            if case .ready(let prepared) = slot { return prepared.number }
            return nil
        }
    }

    /// Starts making segment `number` ready on the journal's background thread (called under
    /// the append lock, with a number the appender has not started).
    ///
    /// Even a wake-up that does not preempt costs the caller a syscall, so the journal wakes
    /// the thread once per segment and sends everything in that one block.
    ///
    /// - Parameters:
    ///   - retired: A segment rotation left; its descriptor is closed on the background thread
    ///     (unless an appender still holds it for a sync) instead of on the append path.
    ///   - work: More background work, run first (arming the reaper's timer).
    func prepare(_ number: UInt64, releasing retired: SegmentFile? = nil, then work: (@Sendable () -> Void)? = nil) {
        let stale = slot.withLock { slot -> Prepared? in
            defer { slot = .requested(number) }
            if case .ready(let previous) = slot { return previous }
            return nil
        }
        worker.async {
            withExtendedLifetime(retired) {}
            work?()
            // A ready segment nobody took (not expected: rotation takes or withdraws each one).
            if let stale { self.remove(stale) }
            self.slot.withLock { slot in
                guard case .requested(let requested) = slot, requested == number else { return }
                slot = self.make(number).map { .ready($0) } ?? .idle
            }
        }
    }

    /// The ready segment `number`, or nil after withdrawing any request: the caller then
    /// creates the file itself. Waits for a preparation already under way.
    func take(_ number: UInt64) -> Prepared? {
        let (taken, stale) = slot.withLock { slot -> (Prepared?, Prepared?) in
            defer { slot = .idle }
            guard case .ready(let prepared) = slot else { return (nil, nil) }
            return prepared.number == number ? (prepared, nil) : (nil, prepared)
        }
        if let stale { remove(stale) }
        return taken
    }

    /// Withdraws any request and closes and deletes an unused prepared file (it holds only a header).
    ///
    /// - Parameter firstUnused: The lowest number the appender never started; a stale
    ///   descriptor for a started segment is closed but its file is kept.
    func discard(firstUnused: UInt64) {
        let unused = slot.withLock { slot -> Prepared? in
            defer { slot = .idle }
            if case .ready(let prepared) = slot { return prepared }
            return nil
        }
        guard let unused else { return }
        syscalls.close(unused.descriptor)
        if unused.number >= firstUnused { _ = syscalls.unlink(unused.path) }
    }

    /// Creates segment `number` and writes its header; nil (and no file left) on any failure.
    private func make(_ number: UInt64) -> Prepared? {
        let path = SegmentDirectory.path(in: directoryPath, number: number)
        guard case .success(let descriptor) = syscalls.open(path, flags: Journal.segmentFlags | O_EXCL) else {
            return nil
        }
        let prepared = Prepared(number: number, descriptor: descriptor, path: path, bytes: 0)
        guard let bytes = writeHeader(descriptor) else {
            remove(prepared)
            return nil
        }
        if directoryDescriptor >= 0 {
            // `.fsync`: the file's header and its directory entry are durable before any
            // append relies on them.
            guard case .success = syscalls.fdatasync(descriptor), case .success = syscalls.fsync(directoryDescriptor)
            else {
                remove(prepared)
                return nil
            }
        }
        return Prepared(number: number, descriptor: descriptor, path: path, bytes: bytes)
    }

    /// Writes the header frame; the bytes written, or nil unless the whole frame was written.
    private func writeHeader(_ descriptor: Int32) -> Int? {
        guard let header else { return 0 }
        return header.withUnsafeBytes { payload -> Int? in
            let frameHeader = Framing.header(for: payload, kind: .segmentHeader)
            let expected = Framing.headerSize + payload.count
            let outcome = withUnsafeBytes(of: frameHeader) { frameHeader in
                syscalls.writeFrame(
                    descriptor, header: frameHeader, payload: payload,
                    scratch: UnsafeMutableRawBufferPointer(start: nil, count: 0), operation: .preparedHeader)
            }
            guard case .success(let written) = outcome, written == expected else { return nil }
            return written
        }
    }

    /// Closes a prepared segment that will not be used and deletes its file.
    private func remove(_ prepared: Prepared) {
        syscalls.close(prepared.descriptor)
        _ = syscalls.unlink(prepared.path)
    }
}
