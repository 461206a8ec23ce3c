// The ledger's crash-durable queue: encoded lines wait here, in a shared file mapping beside the
// session's span memory, until one thread writes them to the ledger in runs. A line copied in here
// survives SIGKILL; the next start writes what the killed process had not (LedgerQueue+Replay).
import CPerfShims
import Foundation
import Glibc
import JournalKit
import PerfCore
import Synchronization

/// A bounded multi-producer ring of encoded ledger lines in `sessions/<id>/ledger.queue`
/// (`MAP_SHARED`, so the page cache keeps it when the process dies), drained in order by one
/// thread at a time.
///
/// An emitter reserves room with one compare-and-swap (no lock), copies its line and commits it;
/// the line is then as durable as a written one. If no thread is draining, the emitter takes the
/// drain and writes the committed lines itself when they are few (``inlineDrainBytes``) and no
/// other thread wrote within ``lingerNanos``: its own line is then in the ledger file when it
/// returns, as when it wrote alone; while several threads keep ending lines, one run a moment
/// later carries them all. Otherwise the drain
/// goes to a serial queue that writes runs of up to 256 KiB with one `write(2)` each, so no
/// emitter waits for another thread's disk write. A line that finds no room is dropped and counted
/// in the mapping (durable too), and the drain writes the count as a `dropped` line with
/// `"cause":"backlog"`.
///
/// Layout (little-endian, SpanMemoryFormat.md's "Ledger queue"): a 4,096-byte header (magic
/// `PERFLQ01`, version, capacity, and the byte counters `head`, `tail`, `writing`, `dropped`),
/// then the ring. An entry is a 4-byte word (the line's length, bit 31 set while it is being
/// copied; `0xFFFFFFFF` skips to the ring's end), a CRC-32C of the line, the line, and zeros to
/// 8 bytes. `head` counts bytes reserved, `tail` bytes written to the ledger (and zeroed), and
/// `writing` the end of the run being written now, so a restart knows which run may already be
/// in the ledger.
///
/// `@unchecked Sendable`: the mapping is shared memory accessed only through atomics and the
/// reservation protocol above; the drain is owned by one thread at a time (`draining`).
final class LedgerQueue: @unchecked Sendable {
    static let fileName = "ledger.queue"
    static let magic: UInt64 = 0x3130_514C_4652_4550  // "PERFLQ01"
    static let version: UInt32 = 1
    static let headerBytes = 4096
    /// Header offsets.
    enum Field {
        static let magic = 0, version = 8, capacity = 16, head = 24, tail = 32, writing = 40, dropped = 48
    }
    static let skipWord: UInt32 = 0xFFFF_FFFF
    static let copyingBit: UInt32 = 1 << 31
    /// The most bytes an emitter writes when it finds the drain free; more go to the drain queue.
    static let inlineDrainBytes: UInt64 = 16 * 1024
    /// The most bytes one `write(2)` of the drain carries.
    static let runBytes = 256 * 1024

    let path: String?
    let capacity: UInt64
    private let base: UnsafeMutableRawPointer
    private let mappedBytes: Int
    private let ring: UnsafeMutableRawPointer
    private let writer: LedgerWriter
    private let sessionID: String
    private let draining = Atomic<Bool>(false)
    private let drainQueue = DispatchQueue(label: "perf.ledger.queue")
    private let condition = NSCondition()
    /// Threads in ``waitUntilWritten(deadline:)``: releasing the drain wakes them only when there are any.
    private let waiters = Atomic<Int>(0)
    private let closed = Atomic<Bool>(false)

    /// Lines handed to the writer (counted by the drain, which one thread holds at a time, so
    /// emitters share no counter for it) and lines that found no room, since this queue was made.
    let drainedLines = Atomic<UInt64>(0)
    let droppedLines = Atomic<UInt64>(0)

    private init(
        path: String?, base: UnsafeMutableRawPointer, mappedBytes: Int, writer: LedgerWriter, sessionID: String
    ) {
        self.path = path
        self.base = base
        self.mappedBytes = mappedBytes
        self.capacity = UInt64(mappedBytes - Self.headerBytes)
        self.ring = base + Self.headerBytes
        self.writer = writer
        self.sessionID = sessionID
    }

    deinit { writer.syscalls.unmap(base, bytes: mappedBytes) }

    /// The ring's size for a backlog bound: whole pages, at least 64 KiB.
    static func ringBytes(backlogBytes: Int) -> Int {
        let page = 4096
        return max(64 * 1024, (backlogBytes + page - 1) / page * page)
    }

    /// A queue in the file at `path` (created, or emptied if it exists: the caller replayed it
    /// first), or in anonymous memory when `path` is nil or the file cannot be made (then a kill
    /// loses what it holds; `problem` says why).
    static func make(
        path: String?, backlogBytes: Int, writer: LedgerWriter, sessionID: String,
        problem: (String) -> Void = { _ in }
    ) -> LedgerQueue? {
        let bytes = headerBytes + ringBytes(backlogBytes: backlogBytes)
        if let path {
            switch mapFile(path: path, bytes: bytes, syscalls: writer.syscalls) {
            case .success(let base):
                return LedgerQueue(
                    path: path, base: base, mappedBytes: bytes, writer: writer, sessionID: sessionID
                ).initialised()
            case .failure(let error):
                problem("perf: ledger lines queued in a burst will not survive a crash (\(path): \(error))")
            }
        }
        let mapped = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
        guard let mapped, mapped != MAP_FAILED else { return nil }
        return LedgerQueue(path: nil, base: mapped, mappedBytes: bytes, writer: writer, sessionID: sessionID)
            .initialised()
    }

    /// A step of making the file that failed, with its errno.
    struct MapFailure: Error, CustomStringConvertible {
        let step: String
        let errno: Int32
        var description: String { "\(step): \(String(cString: strerror(errno)))" }
    }

    /// The queue's file made at `bytes` and mapped shared, through the ledger's syscall seam.
    /// (The span sampler's profile slots are made the same way.)
    static func mapFile(
        path: String, bytes: Int, syscalls: FileSyscalls
    ) -> Result<UnsafeMutableRawPointer, MapFailure> {
        let opened: Int
        switch syscalls.open(path, flags: O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, mode: 0o600) {
        case .success(let fd): opened = fd
        case .failure(let error): return .failure(MapFailure(step: "open", errno: error))
        }
        let fd = Int32(opened)
        defer { syscalls.close(fd) }
        // Under a file-size limit below the file, growing it would raise SIGXFSZ or fail: refuse
        // first. Then its blocks are reserved: a write through the mapping to a block the disk
        // could not give is SIGBUS, which no host may get from Perf.
        if let limit = syscalls.fileSizeLimit(), limit < rlim_t(bytes) {
            return .failure(MapFailure(step: "file size limit", errno: EFBIG))
        }
        if case .failure(let error) = syscalls.setSize(fd, bytes: bytes) {
            return .failure(MapFailure(step: "ftruncate", errno: error))
        }
        if case .failure(let error) = syscalls.reserve(fd, bytes: bytes) {
            _ = syscalls.unlink(path)
            return .failure(MapFailure(step: "fallocate", errno: error))
        }
        switch syscalls.mapShared(fd, bytes: bytes) {
        case .success(let mapped): return .success(mapped)
        case .failure(let error): return .failure(MapFailure(step: "mmap", errno: error.errno))
        }
    }

    private func initialised() -> LedgerQueue {
        word64(Field.capacity).pointee = capacity
        base.storeBytes(of: Self.version, toByteOffset: Field.version, as: UInt32.self)
        perf_atomic_store_u64_release(word64(Field.magic), Self.magic)
        return self
    }

    func word64(_ offset: Int) -> UnsafeMutablePointer<UInt64> {
        (base + offset).assumingMemoryBound(to: UInt64.self)
    }

    private func entryWord(_ position: UInt64) -> UnsafeMutablePointer<UInt32> {
        (ring + Int(position % capacity)).assumingMemoryBound(to: UInt32.self)
    }

    static func entryBytes(_ length: Int) -> UInt64 { UInt64(8 + (length + 7) & ~7) }

    /// Copies `line` (whole, newline included) in and commits it; false when the ring has no
    /// room (the line is counted as dropped). The line is durable when this returns true. With
    /// `mayWrite` false (the caller holds a lock others wait on) this thread never writes: the
    /// drain queue does.
    @discardableResult
    func submit(_ line: UnsafeRawBufferPointer, mayWrite: Bool = true) -> Bool {
        let need = Self.entryBytes(line.count)
        guard line.count < Int(Self.copyingBit), need <= capacity / 2, let position = reserve(need) else {
            perf_atomic_add_u64(word64(Field.dropped), 1)
            droppedLines.add(1, ordering: .relaxed)
            startDrain(inlineAllowed: false)
            return false
        }
        let word = entryWord(position)
        perf_atomic_store_u32_release(word, UInt32(line.count) | Self.copyingBit)
        let payload = UnsafeMutableRawPointer(word) + 8
        if let source = line.baseAddress { payload.copyMemory(from: source, byteCount: line.count) }
        (UnsafeMutableRawPointer(word) + 4).storeBytes(of: CRC32C.checksum(line), as: UInt32.self)
        perf_atomic_store_u32_release(word, UInt32(line.count))
        startDrain(inlineAllowed: mayWrite)
        return true
    }

    /// Claims `need` bytes after `head` (and the rest of the ring first, as a skip, when the entry
    /// would cross its end); nil when that would overrun lines not yet written.
    private func reserve(_ need: UInt64) -> UInt64? {
        while true {
            // Tail first: the head read after it is at least the head the drain had passed, so
            // `head - tail` never underflows.
            let tail = perf_atomic_load_u64_acquire(word64(Field.tail))
            let head = perf_atomic_load_u64(word64(Field.head))
            let offset = head % capacity
            let skip = capacity - offset < need ? capacity - offset : 0
            guard head &- tail &+ skip &+ need <= capacity else { return nil }
            guard perf_atomic_cas_u64(word64(Field.head), head, head + skip + need) != 0 else { continue }
            if skip > 0 { perf_atomic_store_u32_release(entryWord(head), Self.skipWord) }
            return head + skip
        }
    }

    /// After a commit or a drop: makes sure a thread drains. The emitter drains itself when the
    /// drain is free and at most ``inlineDrainBytes`` wait (its line is then in the file when it
    /// returns); else the drain queue does.
    private func startDrain(inlineAllowed: Bool) {
        perf_atomic_fence_seq_cst()
        // A load first: while another thread holds the drain (most of a burst), the flag's cache
        // line stays shared instead of moving to every emitter's core for a compare-and-swap that
        // fails. The holder checks for work after it lets go (releaseDrain), so nothing is left.
        guard !draining.load(ordering: .sequentiallyConsistent),
            draining.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged
        else { return }
        let tail = perf_atomic_load_u64_acquire(word64(Field.tail))
        let waiting = perf_atomic_load_u64(word64(Field.head)) &- tail
        guard inlineAllowed, waiting <= Self.inlineDrainBytes else {
            drainQueue.async { self.drainLoop() }
            return
        }
        let me = UInt64(UInt32(bitPattern: perf_thread_tid()))
        let last = lastWrite.load(ordering: .relaxed)
        // 32-bit stamps of ~1 µs compared with wrap-around: right at any uptime.
        let elapsed = Self.stamp(perf_monotonic_ns()) &- UInt32(truncatingIfNeeded: last >> 32)
        if last != 0, last & 0xFFFF_FFFF != me, elapsed < UInt32(Self.lingerNanos >> 10) {
            // Lines keep coming from several threads (a server whose every request is slow): they
            // are durable in the queue already, so this thread leaves them for one run written a
            // moment later rather than pay a write(2) per line. One thread alone always writes its
            // own line before it returns.
            drainQueue.asyncAfter(deadline: .now() + .nanoseconds(Int(Self.lingerNanos))) { self.drainLoop() }
            return
        }
        _ = drainOnce(limit: Int(Self.inlineDrainBytes))
        noteWrite(by: me)
        releaseDrain()
    }

    /// While several threads end lines within this of each other, a line may wait this long in
    /// the queue for the next run.
    static let lingerNanos: UInt64 = 1_000_000
    /// When an emitter last wrote its lines itself (``stamp(_:)``, high 32 bits) and which thread
    /// it was (low 32 bits); 0 before the first. The drain queue's runs leave it alone, so a
    /// thread alone never waits for the queue's next run.
    private let lastWrite = Atomic<UInt64>(0)

    private func noteWrite(by thread: UInt64) {
        lastWrite.store(UInt64(Self.stamp(perf_monotonic_ns())) << 32 | thread, ordering: .relaxed)
    }

    /// Monotonic nanoseconds in units of 1,024 ns, kept to 32 bits (wraps every 73 minutes).
    static func stamp(_ nanos: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: nanos >> 10) }

    /// Gives the drain up, then takes it back for the drain queue if lines committed meanwhile
    /// (their emitters saw the drain taken and left them to whoever held it).
    private func releaseDrain() {
        draining.store(false, ordering: .sequentiallyConsistent)
        perf_atomic_fence_seq_cst()
        if waiters.load(ordering: .sequentiallyConsistent) > 0 { wakeWaiters() }
        guard hasWork(),
            draining.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged
        else { return }
        drainQueue.async { self.drainLoop() }
    }

    /// True when a committed line (or a skip) waits at `tail`, or drops wait to be told.
    private func hasWork() -> Bool {
        if perf_atomic_load_u64(word64(Field.dropped)) > 0 { return true }
        let tail = perf_atomic_load_u64(word64(Field.tail))
        guard tail != perf_atomic_load_u64_acquire(word64(Field.head)) else { return false }
        let word = perf_atomic_load_u32_acquire(entryWord(tail))
        return word != 0 && word & Self.copyingBit == 0 || word == Self.skipWord
    }

    private func drainLoop() {
        while drainOnce(limit: Self.runBytes) {}
        releaseDrain()
    }

    /// Writes the committed lines at `tail` (up to `limit` bytes) with one `write(2)` and the
    /// drops counted since the last time; true if it moved anything. The caller owns the drain.
    private func drainOnce(limit: Int) -> Bool {
        let tail = perf_atomic_load_u64(word64(Field.tail))
        let head = perf_atomic_load_u64_acquire(word64(Field.head))
        var position = tail
        var run: [UInt8] = []
        var lines = 0
        while position < head, run.count < limit {
            let word = perf_atomic_load_u32_acquire(entryWord(position))
            if word == Self.skipWord {
                position += capacity - position % capacity
                continue
            }
            guard word != 0, word & Self.copyingBit == 0 else { break }
            let length = Int(word)
            let payload = UnsafeRawBufferPointer(start: UnsafeRawPointer(entryWord(position)) + 8, count: length)
            run.append(contentsOf: payload)
            lines += 1
            position += Self.entryBytes(length)
        }
        let moved = position != tail
        if lines > 0 {
            perf_atomic_store_u64_release(word64(Field.writing), position)
            _ = writer.append(encodedLines: run[...], count: lines, session: sessionID)
            drainedLines.add(UInt64(lines), ordering: .relaxed)
        }
        if moved {
            zero(from: tail, to: position)
            perf_atomic_store_u64_release(word64(Field.tail), position)
            perf_atomic_store_u64_release(word64(Field.writing), position)
        }
        let dropped = perf_atomic_load_u64(word64(Field.dropped))
        if dropped > 0 {
            writer.appendDropped(Int(clamping: dropped), cause: DropCause.backlog.rawValue, session: sessionID)
            perf_atomic_sub_u64(word64(Field.dropped), dropped)
        }
        return moved || dropped > 0
    }

    /// Zeroes the ring's bytes `[from, to)` (positions), so a later lap never reads an old word.
    private func zero(from: UInt64, to: UInt64) {
        var position = from
        while position < to {
            let offset = position % capacity
            let count = min(to - position, capacity - offset)
            memset(ring + Int(offset), 0, Int(count))
            position += count
        }
    }

    private func wakeWaiters() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until every line committed before this call is written (or counted); false if
    /// `deadline` passed first.
    func waitUntilWritten(deadline: Date) -> Bool {
        let mark = perf_atomic_load_u64_acquire(word64(Field.head))
        waiters.add(1, ordering: .sequentiallyConsistent)
        defer { waiters.subtract(1, ordering: .sequentiallyConsistent) }
        condition.lock()
        defer { condition.unlock() }
        while perf_atomic_load_u64_acquire(word64(Field.tail)) < mark
            || perf_atomic_load_u64(word64(Field.dropped)) > 0
        {
            condition.unlock()
            startDrain(inlineAllowed: false)
            condition.lock()
            if perf_atomic_load_u64_acquire(word64(Field.tail)) >= mark,
                perf_atomic_load_u64(word64(Field.dropped)) == 0
            {
                break
            }
            // Releasing the drain wakes waiters; the short timeout bounds a wake missed between the
            // check above and this wait.
            if !condition.wait(until: min(deadline, Date(timeIntervalSinceNow: 0.01))), Date() >= deadline {
                return false
            }
        }
        return true
    }

    /// Drains what is left and removes the file when nothing is left in it (a clean end leaves no
    /// queue for the next start to replay).
    func close(deadline: Date) {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let empty = waitUntilWritten(deadline: deadline)
        if empty, let path { _ = writer.syscalls.unlink(path) }
    }
}
