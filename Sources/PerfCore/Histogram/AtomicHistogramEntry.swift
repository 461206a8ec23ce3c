// One name's histogram in span memory: the name and up to one counter stripe per recording
// thread, so concurrent threads tick separate cache lines.
import CPerfShims

/// One name's entry in span memory (192 bytes, see ``SpanMemoryLayout``): the name's address in
/// this process (the table's key), where its text lives in the arena, a check word, then one
/// stripe reference per stripe index, 0 until a thread mapped to that index first records the
/// name. Stripes below `PERF_EXCLUSIVE_STRIPES` have one writer at a time and are updated with
/// plain stores; the shared ones above use atomic adds.
///
/// Memory per name: 192 bytes and its text, plus for each thread stripe that records it 576 bytes
/// and 128 bytes per group of 16 buckets it touches: about 1 KiB for a thread ending spans of a
/// few durations.
struct AtomicHistogramEntry: @unchecked Sendable {
    // @unchecked: an address into span memory, written only through the C atomics or before publication.
    typealias L = SpanMemoryLayout
    static let exclusiveStripeCount = Int(PERF_EXCLUSIVE_STRIPES)
    static let stripeCount = Int(PERF_EXCLUSIVE_STRIPES + PERF_SHARED_STRIPES)
    /// Longest name text kept; longer names are cut (at a UTF-8 boundary) in the memory's copy.
    static let maximumNameBytes = 1024
    /// Longest call site text kept (`Module/File.swift:88`); a longer one is not kept.
    static let maximumSiteBytes = 512

    let raw: UnsafeMutableRawPointer

    @inline(__always)
    init(_ raw: UnsafeRawPointer) {
        self.raw = UnsafeMutableRawPointer(mutating: raw)
    }

    /// This entry's number plus one: what a flight recorder slot stores to name its span (stored
    /// in the entry when it is made, so the hot path reads it rather than divides).
    @inline(__always)
    var nameRef: UInt32 { raw.load(fromByteOffset: L.entryRefOffset, as: UInt32.self) }

    /// Writes a new entry for the name at `key` into a claimed slot of the memory (slow path:
    /// once per name), or returns nil when every entry or the arena is used up. `site`, where the
    /// name's first span began, is kept beside the name so that a report can name the call site
    /// of a span that never went over budget (which writes no ledger line).
    static func make(key: UnsafeRawPointer, length: Int, site: CallSite?, memory: SpanMemory) -> AtomicHistogramEntry? {
        guard let index = memory.claimEntry() else { return nil }
        let raw = memory.entry(index)
        var kept = min(length, maximumNameBytes)
        let text = UnsafeRawBufferPointer(start: key, count: length)
        // Never cut inside a UTF-8 sequence.
        while kept < length, kept > 0, text[kept] & 0xC0 == 0x80 { kept -= 1 }
        let nameRef = memory.allocate(bytes: max(kept, 1))
        guard nameRef != 0 else { return nil }
        let copy = memory.arena + Int(nameRef) * L.refUnit
        copy.copyMemory(from: key, byteCount: kept)
        raw.storeBytes(of: UInt64(UInt(bitPattern: key)), toByteOffset: L.entryKeyOffset, as: UInt64.self)
        raw.storeBytes(of: UInt32(index + 1), toByteOffset: L.entryRefOffset, as: UInt32.self)
        let nameWord = UInt64(nameRef) | UInt64(kept) << 32
        raw.storeBytes(of: nameWord, toByteOffset: L.entryNameOffset, as: UInt64.self)
        if let site { store(site: site, in: raw, memory: memory) }
        let check = SpanMemoryLayout.entryCheck(
            nameWord: nameWord, bytes: UnsafeRawBufferPointer(start: copy, count: kept))
        perf_atomic_store_u64_release((raw + L.entryCheckOffset).assumingMemoryBound(to: UInt64.self), check)
        return AtomicHistogramEntry(raw)
    }

    /// Copies the site's text into the arena with its check word; a site that finds no room (or is
    /// too long) is left out, the entry is kept.
    private static func store(site: CallSite, in raw: UnsafeMutableRawPointer, memory: SpanMemory) {
        var text = site.description
        text.withUTF8 { bytes in
            guard bytes.count > 0, bytes.count <= maximumSiteBytes else { return }
            let siteRef = memory.allocate(bytes: bytes.count)
            guard siteRef != 0 else { return }
            let copy = memory.arena + Int(siteRef) * L.refUnit
            copy.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
            let siteWord = UInt64(siteRef) | UInt64(bytes.count) << 32
            raw.storeBytes(of: siteWord, toByteOffset: L.entrySiteOffset, as: UInt64.self)
            let check = SpanMemoryLayout.entryCheck(
                nameWord: siteWord, bytes: UnsafeRawBufferPointer(start: copy, count: bytes.count))
            raw.storeBytes(of: check, toByteOffset: L.entrySiteCheckOffset, as: UInt64.self)
        }
    }

    /// Whether this entry belongs to the name starting at `key` (written before publication).
    func holds(key: UnsafeRawPointer) -> Bool {
        raw.load(fromByteOffset: L.entryKeyOffset, as: UInt64.self) == UInt64(UInt(bitPattern: key))
    }

    private var stripeRefs: UnsafeMutablePointer<UInt32> {
        (raw + L.entryStripesOffset).assumingMemoryBound(to: UInt32.self)
    }

    /// Hot path: finds the calling thread's stripe and ticks it, with plain stores when the thread
    /// owns the stripe and atomic adds when it shares it. False when the arena is full.
    ///
    /// - Parameter arena: `memory.arena`, cached by the caller so the hot path does not reload it
    ///   through the memory object.
    @inline(__always)
    func record(nanos: UInt64, arena: UnsafeMutableRawPointer, memory: SpanMemory) -> Bool {
        let index = Int(perf_thread_stripe())
        var ref = perf_atomic_load_u32_acquire(stripeRefs + index)
        if ref == 0 {
            ref = claimStripe(index, memory: memory)
            if ref == 0 { return false }
        }
        let stripe = AtomicHistogramStripe(arena: arena, ref: ref)
        return index < Self.exclusiveStripeCount
            ? stripe.recordExclusively(nanos: nanos, memory: memory) : stripe.recordShared(nanos: nanos, memory: memory)
    }

    /// The span path's fast case: the calling thread owns an exclusive stripe of this entry and
    /// the bucket's chunk exists; false (nothing written) otherwise, for ``record(nanos:arena:memory:)``
    /// to do it the long way. Calls nothing.
    @inline(__always)
    func recordOwned(nanos: UInt64, arena: UnsafeMutableRawPointer) -> Bool {
        let index = perf_thread_stripe_or_none()
        guard index < PERF_EXCLUSIVE_STRIPES else { return false }
        let ref = perf_atomic_load_u32_acquire(stripeRefs + Int(index))
        guard ref != 0 else { return false }
        return AtomicHistogramStripe(arena: arena, ref: ref).recordExclusivelyIfChunked(nanos: nanos)
    }

    /// Slow path: publishes a fresh stripe, or adopts the one another thread sharing the index
    /// published first.
    @inline(never)
    private func claimStripe(_ index: Int, memory: SpanMemory) -> UInt32 {
        let fresh = memory.allocate(bytes: L.stripeBytes)
        guard fresh != 0 else { return 0 }
        (memory.arena + Int(fresh) * L.refUnit).storeBytes(
            of: L.stripeTag, toByteOffset: L.stripeTagOffset, as: UInt64.self)
        if perf_atomic_cas_u32(stripeRefs + index, 0, fresh) != 0 { return fresh }
        return perf_atomic_load_u32_acquire(stripeRefs + index)
    }
}

extension SpanMemoryLayout {
    /// The check word of an entry's name: never 0 (the mark of an incomplete or abandoned entry).
    static func entryCheck(nameWord: UInt64, bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325 ^ nameWord
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return (hash ^ hash >> 31) | 1
    }
}
