// The next start's half of the ledger queue: the lines a prior process committed but had not
// written when it died go to the ledger, in order, with the drops it had counted.
import Foundation
import Glibc
import JournalKit
import PerfCore

extension LedgerQueue {
    /// What one replay found.
    struct Replay: Equatable {
        /// Committed lines written to the ledger now.
        var lines = 0
        /// Lines the prior process counted as dropped and had not told yet (now in a `dropped` line).
        var dropped: UInt64 = 0
        /// Lines being copied when the process died: their `end()` had not returned, so they were
        /// never promised; skipped.
        var unfinished = 0
        /// Bytes that held no readable entry (a copy cut short before its length was stored).
        var unreadableBytes: UInt64 = 0
        /// The run being written at the kill was found in the ledger already, so it was not
        /// written twice.
        var runAlreadyWritten = false
    }

    /// Writes what the queue at `path` still holds to `writer` and marks it empty; nil when there
    /// is no queue there or it is not one this version reads (then it is left as it is).
    ///
    /// Every field is checked before it is used: any bytes at `path` are read without a crash.
    @discardableResult
    static func replay(path: String, into writer: LedgerWriter, session: String) -> Replay? {
        let syscalls = writer.syscalls
        guard case .success(let opened) = syscalls.open(path, flags: O_RDWR | O_CLOEXEC, mode: 0) else { return nil }
        let fd = Int32(opened)
        defer { syscalls.close(fd) }
        guard case .success(let info) = syscalls.fileStatus(fd), info.st_size >= headerBytes + 64,
            info.st_size <= 1 << 30
        else { return nil }
        // Read with pread, never mapped: a file cut short under the reader cannot fault it.
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        let read = bytes.withUnsafeMutableBytes { syscalls.read(fd, into: $0, at: 0) }
        guard read == .success(bytes.count) else { return nil }
        return bytes.withUnsafeBytes { file -> Replay? in
            func field(_ offset: Int) -> UInt64 { file.load(fromByteOffset: offset, as: UInt64.self) }
            let capacity = UInt64(file.count - headerBytes)
            guard field(Field.magic) == magic, file.load(fromByteOffset: Field.version, as: UInt32.self) == version,
                field(Field.capacity) == capacity, capacity % 8 == 0
            else { return nil }
            let head = field(Field.head)
            let tail = field(Field.tail)
            var replay = Replay()
            if tail <= head, head - tail <= capacity {
                let ring = UnsafeRawBufferPointer(rebasing: file[headerBytes...])
                let writing = field(Field.writing)
                var entries = readEntries(ring, from: tail, to: head, replay: &replay)
                if writing > tail, writing <= head, let last = entries.last(where: { $0.end <= writing }),
                    ledgerContains(last.line, writer: writer)
                {
                    // The write of [tail, writing) returned before the kill; its `tail` store did not.
                    replay.runAlreadyWritten = true
                    entries.removeAll { $0.end <= writing }
                }
                var run: [UInt8] = []
                for entry in entries { run.append(contentsOf: entry.line) }
                if !entries.isEmpty {
                    _ = writer.append(encodedLines: run[...], count: entries.count, session: session)
                }
                replay.lines = entries.count
            }
            replay.dropped = field(Field.dropped)
            if replay.dropped > 0 {
                writer.appendDropped(Int(clamping: replay.dropped), cause: DropCause.backlog.rawValue, session: session)
            }
            // Empty now: a second replay (this start dying before it acknowledged) writes nothing again.
            var emptied = (tail: head, writing: head, dropped: UInt64(0))
            _ = withUnsafeBytes(of: &emptied) { syscalls.write(fd, $0, at: Field.tail) }
            return replay
        }
    }

    /// The committed lines between `from` and `to`, in order, each with the position after it.
    /// A word of 0 where an entry should start (a copy cut short before its length was stored) is
    /// stepped over 8 bytes at a time until a committed entry whose checksum holds.
    static func readEntries(
        _ ring: UnsafeRawBufferPointer, from: UInt64, to: UInt64, replay: inout Replay
    ) -> [(line: [UInt8], end: UInt64)] {
        let capacity = UInt64(ring.count)
        var entries: [(line: [UInt8], end: UInt64)] = []
        var position = from
        func word(at position: UInt64) -> UInt32 {
            ring.loadUnaligned(fromByteOffset: Int(position % capacity), as: UInt32.self)
        }
        // Positions only grow, and every step is checked against what is left before it is taken:
        // a damaged file (a tail not a multiple of 8, counters at the top of their range) reads
        // as unreadable bytes, never as an overflow or a load past the ring.
        while position < to, to - position >= 8 {
            let offset = position % capacity
            guard capacity - offset >= 8 else {
                replay.unreadableBytes += capacity - offset
                position += min(capacity - offset, to - position)
                continue
            }
            let value = word(at: position)
            if value == skipWord {
                position += min(capacity - offset, to - position)
                continue
            }
            let length = UInt64(value & ~copyingBit)
            let size = entryBytes(Int(length))
            let fits = length > 0 && size <= capacity - offset && size <= to - position
            if value & copyingBit != 0, fits {
                replay.unfinished += 1
                position += size
                continue
            }
            if value != 0, fits {
                let start = Int(offset) + 8
                let payload = UnsafeRawBufferPointer(rebasing: ring[start..<start + Int(length)])
                let stored = ring.loadUnaligned(fromByteOffset: Int(offset) + 4, as: UInt32.self)
                if CRC32C.checksum(payload) == stored, payload.last == UInt8(ascii: "\n") {
                    position += size
                    entries.append((Array(payload), position))
                    continue
                }
            }
            replay.unreadableBytes += 8
            position += 8
        }
        return entries
    }

    /// Whether `line` is in the newest 8 MiB of the ledger or of its `.prev`.
    static func ledgerContains(_ line: [UInt8], writer: LedgerWriter) -> Bool {
        [writer.path, writer.previousPath].contains { path in
            guard let handle = FileHandle(forReadingAtPath: path) else { return false }
            defer { try? handle.close() }
            let end = (try? handle.seekToEnd()) ?? 0
            try? handle.seek(toOffset: end > 8 << 20 ? end - (8 << 20) : 0)
            guard let data = try? handle.readToEnd() else { return false }
            return data.range(of: Data(line)) != nil
        }
    }
}
