// An open ledger file whose descriptor closes only when the last in-flight write lets go of it.
import Synchronization

/// One open `perf-events.jsonl` descriptor, shared by reference.
///
/// Rotation swaps a new descriptor in while other threads may still be inside `write(2)` on the
/// old one. Closing it on the spot could hand its number to an unrelated `open` and a ledger line
/// would land in someone else's file; instead each appender holds a reference for the duration of
/// its write and the descriptor closes in `deinit`, when nobody can be writing to it.
final class LedgerDescriptor: Sendable {
    let fd: Int32
    private let syscalls: FileSyscalls
    /// Lines written through this descriptor, for the periodic "was the file deleted?" check.
    let linesWritten = Atomic<Int>(0)
    /// `linesWritten` at the last check that found the file still linked.
    let linesVerified = Atomic<Int>(0)

    init(fd: Int32, syscalls: FileSyscalls) {
        self.fd = fd
        self.syscalls = syscalls
    }

    deinit { syscalls.close(fd) }
}
