// Where the span sampler keeps each over-budget span's profile while the span is open:
// `sessions/<id>/profiles.map`, a shared file mapping beside the span memory, so a span that
// never ends (the process was killed, or hung for good) still has its profile so far at the next
// start.
import CPerfShims
import Glibc
import PerfCore
import Synchronization

/// A fixed set of slots, each the profile of one open over-budget span.
///
/// The sampler thread claims a slot when a span passes its budget, writes the span's name and
/// start, and rewrites the profile (``SpanProfile/jsonBytes``) after each sample. The span's own
/// thread takes it out when the span ends. A slot's state word says who may touch it:
///
/// - `free` (0): anyone may claim it;
/// - `live` (1): the sampler may write it; the owner may take it;
/// - `writing` (2): the sampler is rewriting it; an owner that comes to take it waits (a copy of
///   at most ``textCapacity`` bytes, no system call);
/// - `taken` (3): the owner has read it; the sampler frees it.
///
/// Layout (SpanMemoryFormat.md, "Profiles"): a 4,096-byte header (magic `PERFPRF1`, version,
/// slot bytes, slot count, pid, the clock anchor, profiles dropped because every slot was in use),
/// then the slots. A slot: state, the span's start (span clock), its budget, its start wall time,
/// the thread id and the text's length, the name's length and bytes, then the text.
///
/// `@unchecked Sendable`: the mapping is touched only through the state protocol above.
package final class ProfileSlots: SpanProfileSource, @unchecked Sendable {
    static let fileName = "profiles.map"
    static let magic: UInt64 = 0x3146_5250_4652_4550  // "PERFPRF1"
    static let version: UInt32 = 1
    static let headerBytes = 4096
    static let slotBytes = 32 * 1024
    static let defaultSlotCount = 64
    /// The longest name kept.
    static let nameCapacity = 256
    /// Header offsets.
    enum Header {
        static let magic = 0, version = 8, slotBytes = 16, pid = 24, anchorMonotonic = 32, anchorWall = 40
        static let dropped = 64
    }
    /// Slot offsets.
    enum Slot {
        static let state = 0, start = 8, budget = 16, startWall = 24, tid = 32, textLength = 36, nameLength = 40
        static let name = 64
        static let text = name + nameCapacity
    }
    static var textCapacity: Int { slotBytes - Slot.text }

    enum State: UInt64 {
        case free = 0, live, writing, taken
    }

    let path: String?
    let slotCount: Int
    private let base: UnsafeMutableRawPointer
    private let mappedBytes: Int

    private init(path: String?, base: UnsafeMutableRawPointer, mappedBytes: Int) {
        self.path = path
        self.base = base
        self.mappedBytes = mappedBytes
        slotCount = (mappedBytes - Self.headerBytes) / Self.slotBytes
    }

    deinit { munmap(base, mappedBytes) }

    /// Slots in `directory` (a session's), or in anonymous memory when it is `nil` or the file
    /// cannot be made (then `problem` hears why once: profiles then do not survive a crash).
    package static func make(directory: String?, slotCount: Int = defaultSlotCount, clock: any PerfClock)
        -> ProfileSlots?
    {
        make(directory: directory, slotCount: slotCount, syscalls: FileSyscalls(), clock: clock)
    }

    static func make(
        directory: String?, slotCount: Int, syscalls: FileSyscalls,
        clock: any PerfClock, problem: (String) -> Void = { _ in }
    ) -> ProfileSlots? {
        let bytes = headerBytes + max(1, slotCount) * slotBytes
        var slots: ProfileSlots?
        if let directory {
            let path = directory + "/" + fileName
            switch LedgerQueue.mapFile(path: path, bytes: bytes, syscalls: syscalls) {
            case .success(let base): slots = ProfileSlots(path: path, base: base, mappedBytes: bytes)
            case .failure(let error):
                problem("perf: span profiles will not survive a crash (\(path): \(error))")
            }
        }
        if slots == nil {
            let mapped = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
            guard let mapped, mapped != MAP_FAILED else { return nil }
            slots = ProfileSlots(path: nil, base: mapped, mappedBytes: bytes)
        }
        guard let slots else { return nil }
        slots.base.storeBytes(of: version, toByteOffset: Header.version, as: UInt32.self)
        slots.base.storeBytes(of: UInt32(slotBytes), toByteOffset: Header.slotBytes, as: UInt32.self)
        slots.base.storeBytes(of: UInt32(slots.slotCount), toByteOffset: Header.slotBytes + 4, as: UInt32.self)
        slots.base.storeBytes(of: getpid(), toByteOffset: Header.pid, as: Int32.self)
        slots.word(Header.anchorMonotonic).pointee = clock.monotonicNanos()
        slots.word(Header.anchorWall).pointee = clock.wallNanos()
        perf_atomic_store_u64_release(slots.word(Header.magic), magic)
        return slots
    }

    private func word(_ offset: Int) -> UnsafeMutablePointer<UInt64> {
        (base + offset).assumingMemoryBound(to: UInt64.self)
    }

    private func slot(_ index: Int) -> UnsafeMutableRawPointer { base + Self.headerBytes + index * Self.slotBytes }

    private func state(_ index: Int) -> UnsafeMutablePointer<UInt64> {
        slot(index).assumingMemoryBound(to: UInt64.self)
    }

    /// Profiles that found every slot in use, since these slots were made.
    var dropped: UInt64 { perf_atomic_load_u64(word(Header.dropped)) }

    /// Claims a free slot for the span `name` that began at `startNanos` (span clock) on thread
    /// `tid`; its reference (index + 1), or `nil` when every slot is in use (counted in
    /// ``dropped``). Only the sampler claims.
    func claim(name: String, startNanos: UInt64, budgetNanos: UInt64, startWallNanos: UInt64, tid: Int32) -> UInt64? {
        for index in 0..<slotCount where perf_atomic_load_u64(state(index)) == State.free.rawValue {
            let base = slot(index)
            guard perf_atomic_cas_u64(state(index), State.free.rawValue, State.writing.rawValue) != 0 else { continue }
            base.storeBytes(of: startNanos, toByteOffset: Slot.start, as: UInt64.self)
            base.storeBytes(of: budgetNanos, toByteOffset: Slot.budget, as: UInt64.self)
            base.storeBytes(of: startWallNanos, toByteOffset: Slot.startWall, as: UInt64.self)
            base.storeBytes(of: tid, toByteOffset: Slot.tid, as: Int32.self)
            base.storeBytes(of: UInt32(0), toByteOffset: Slot.textLength, as: UInt32.self)
            let bytes = Array(name.utf8.prefix(Self.nameCapacity))
            bytes.withUnsafeBytes { (base + Slot.name).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            base.storeBytes(of: UInt32(bytes.count), toByteOffset: Slot.nameLength, as: UInt32.self)
            perf_atomic_store_u64_release(state(index), State.live.rawValue)
            return UInt64(index + 1)
        }
        perf_atomic_add_u64(word(Header.dropped), 1)
        return nil
    }

    /// Rewrites slot `ref`'s profile; false when its owner has taken it (the span ended). A
    /// profile longer than a slot is written with fewer frames per stack.
    @discardableResult
    func write(_ ref: UInt64, _ profile: SpanProfile) -> Bool {
        guard let index = index(ref) else { return false }
        let bytes = Self.fitting(profile)
        guard perf_atomic_cas_u64(state(index), State.live.rawValue, State.writing.rawValue) != 0 else { return false }
        let base = slot(index)
        bytes.withUnsafeBytes { (base + Slot.text).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        base.storeBytes(of: UInt32(bytes.count), toByteOffset: Slot.textLength, as: UInt32.self)
        perf_atomic_store_u64_release(state(index), State.live.rawValue)
        return true
    }

    /// The profile's bytes, with stacks cut to fewer frames until they fit a slot.
    static func fitting(_ profile: SpanProfile) -> [UInt8] {
        var bytes = profile.jsonBytes
        var frames = profile.top.map(\.frames.count).max() ?? 0
        var cut = profile
        while bytes.count > textCapacity, frames > 0 {
            frames /= 2
            for index in cut.top.indices { cut.top[index].frames = Array(cut.top[index].frames.prefix(frames)) }
            bytes = cut.jsonBytes
        }
        return bytes.count > textCapacity ? SpanProfile(intervalMs: profile.intervalMs).jsonBytes : bytes
    }

    /// Takes the profile of the span that began at `startNanos` out of slot `ref`: the owner's
    /// side, at the span's end. `nil` when the slot holds another span (it was reused) or none.
    package func take(_ ref: UInt64, startNanos: UInt64) -> SpanProfile? {
        guard let index = index(ref) else { return nil }
        let base = slot(index)
        while true {
            let seen = perf_atomic_load_u64_acquire(state(index))
            if seen == State.writing.rawValue {
                sched_yield()
                continue
            }
            guard seen == State.live.rawValue,
                base.load(fromByteOffset: Slot.start, as: UInt64.self) == startNanos,
                perf_atomic_cas_u64(state(index), State.live.rawValue, State.taken.rawValue) != 0
            else {
                if seen == State.live.rawValue,
                    base.load(fromByteOffset: Slot.start, as: UInt64.self) == startNanos
                {
                    continue  // the sampler began a write between the load and the swap
                }
                return nil
            }
            break
        }
        let length = min(Int(base.load(fromByteOffset: Slot.textLength, as: UInt32.self)), Self.textCapacity)
        let text = UnsafeBufferPointer(start: (base + Slot.text).assumingMemoryBound(to: UInt8.self), count: length)
        return SpanProfile(jsonBytes: text)
    }

    /// Whether the owner has taken slot `ref` (the sampler then frees it).
    func isTaken(_ ref: UInt64) -> Bool {
        guard let index = index(ref) else { return false }
        return perf_atomic_load_u64_acquire(state(index)) == State.taken.rawValue
    }

    /// Frees slot `ref` if it is taken, or if it is live and `abandoned` (its span ended long
    /// ago without taking it: it ended under budget after all, or its thread died). Returns
    /// whether it was freed.
    @discardableResult
    func release(_ ref: UInt64, abandoned: Bool) -> Bool {
        guard let index = index(ref) else { return false }
        if perf_atomic_cas_u64(state(index), State.taken.rawValue, State.free.rawValue) != 0 { return true }
        return abandoned && perf_atomic_cas_u64(state(index), State.live.rawValue, State.free.rawValue) != 0
    }

    /// Frees every slot: the sampler stopped, and no span it sampled can take one any more.
    func releaseAll() {
        for index in 0..<slotCount { perf_atomic_store_u64_release(state(index), State.free.rawValue) }
    }

    private func index(_ ref: UInt64) -> Int? {
        ref >= 1 && ref <= UInt64(slotCount) ? Int(ref - 1) : nil
    }
}
