// One open segment: its descriptor lives until the last appender writing or syncing it lets go.
import Synchronization

/// An open segment file and the sequence numbers that make `.fsync` appends share syncs.
///
/// Appenders take a reference under the append lock and may write to it (an ordinary append)
/// or `fdatasync` it (a `.fsync` one) after releasing the lock, so rotation never closes a
/// descriptor out from under a write or a sync: the descriptor is closed when the last
/// reference goes away.
final class SegmentFile: Sendable {
    let number: UInt64
    let descriptor: Int32
    let path: String
    let syscalls: Syscalls
    /// Sequence of the newest entry whose `write(2)` returned.
    let writtenSequence = Atomic<UInt64>(0)
    /// Every entry up to this sequence has been flushed by `fdatasync`.
    let syncedSequence = Atomic<UInt64>(0)
    /// The directory entry of this file still needs an `fsync` of the directory (`.fsync` only).
    let directoryNeedsSync: Atomic<Bool>

    init(number: UInt64, descriptor: Int32, path: String, syscalls: Syscalls, directoryNeedsSync: Bool) {
        self.number = number
        self.descriptor = descriptor
        self.path = path
        self.syscalls = syscalls
        self.directoryNeedsSync = Atomic(directoryNeedsSync)
    }

    deinit { syscalls.close(descriptor) }

    /// Records that the entry with `sequence` is written.
    @inline(__always)
    func markWritten(_ sequence: UInt64) {
        writtenSequence.store(sequence, ordering: .releasing)
    }

    /// Makes every entry up to `sequence` durable, sharing a sync another appender already did.
    ///
    /// Lock-free: concurrent callers may each call `fdatasync`, which the kernel serialises;
    /// a caller whose entry an earlier sync covered returns without a syscall.
    func sync(upTo sequence: UInt64) -> Result<Void, SyscallError> {
        if syncedSequence.load(ordering: .acquiring) >= sequence { return .success(()) }
        let target = writtenSequence.load(ordering: .acquiring)
        if case .failure(let failure) = syscalls.fdatasync(descriptor) { return .failure(failure) }
        var current = syncedSequence.load(ordering: .relaxed)
        while current < target {
            let (exchanged, original) = syncedSequence.compareExchange(
                expected: current, desired: target, ordering: .acquiringAndReleasing)
            if exchanged { break }
            current = original
        }
        return .success(())
    }
}
