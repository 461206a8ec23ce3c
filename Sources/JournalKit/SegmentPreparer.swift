// Creates the next segment file ahead of time, off the append path: creating a file on ext4
// costs tens of microseconds (more on a busy disk), which would otherwise land on the append
// that rotates.
import Dispatch
import Glibc
import Synchronization

/// Opens `segment-<n>` on a background queue so that rotation only has to pick it up.
///
/// The prepared file is empty until the rotating append writes its header, and recovery
/// treats an empty segment as holding nothing, so a crash with a prepared file on disk loses
/// nothing and leaves no gap. If rotation arrives before the file is ready, the appender
/// creates it itself; the preparer then finds the file taken and discards its descriptor.
final class SegmentPreparer: Sendable {
    /// A created, empty segment file.
    struct Prepared {
        var number: UInt64
        var descriptor: Int32
        var path: String
    }

    private enum Slot {
        case empty
        case ready(Prepared)
    }

    private let slot = Mutex(Slot.empty)
    /// The newest segment number the appender has started. A number at or below it may be in
    /// use or already dropped, so it must never be created again.
    private let started = Atomic<UInt64>(0)
    private let queue: DispatchQueue
    private let directoryPath: String
    private let syscalls: Syscalls

    init(directoryPath: String, syscalls: Syscalls, queue: DispatchQueue) {
        self.directoryPath = directoryPath
        self.syscalls = syscalls
        self.queue = queue
    }

    deinit {
        if case .ready(let prepared) = slot.withLock({ $0 }) { syscalls.close(prepared.descriptor) }
    }

    /// Records that the appender started segment `number` (called under the append lock).
    func noteStarted(_ number: UInt64) {
        started.store(number, ordering: .releasing)
    }

    /// Starts creating segment `number` in the background.
    ///
    /// The check against ``noteStarted(_:)`` is race-free because dropped segments are only
    /// deleted on the same serial queue: if the appender has not started `number` when this
    /// block checks, `number` cannot be deleted before this block has finished.
    ///
    /// - Parameter retired: A segment rotation left; its descriptor is closed on the background
    ///   queue (unless an appender still holds it for a sync) instead of on the append path.
    func prepare(_ number: UInt64, releasing retired: SegmentFile? = nil) {
        queue.async {
            withExtendedLifetime(retired) {}
            guard self.started.load(ordering: .acquiring) < number else { return }
            let path = SegmentDirectory.path(in: self.directoryPath, number: number)
            guard case .success(let descriptor) = self.syscalls.open(path, flags: Journal.segmentFlags | O_EXCL)
            else { return }
            let stale = self.slot.withLock { slot -> Prepared? in
                defer { slot = .ready(Prepared(number: number, descriptor: descriptor, path: path)) }
                if case .ready(let previous) = slot { return previous }
                return nil
            }
            if let stale { self.syscalls.close(stale.descriptor) }
        }
    }

    /// The prepared descriptor for segment `number`, if the background work finished in time.
    func take(_ number: UInt64) -> Prepared? {
        slot.withLock { slot -> Prepared? in
            guard case .ready(let prepared) = slot, prepared.number == number else { return nil }
            slot = .empty
            return prepared
        }
    }

    /// Waits for pending work, then closes and deletes an unused prepared file (it is empty).
    ///
    /// - Parameter firstUnused: The lowest number the appender never started; a stale
    ///   descriptor for a started segment is closed but its file is kept.
    func discard(firstUnused: UInt64) {
        queue.sync {}
        let unused = slot.withLock { slot -> Prepared? in
            defer { slot = .empty }
            if case .ready(let prepared) = slot { return prepared }
            return nil
        }
        guard let unused else { return }
        syscalls.close(unused.descriptor)
        if unused.number >= firstUnused { _ = syscalls.unlink(unused.path) }
    }
}
