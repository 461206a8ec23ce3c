// Where a parent span counts its children: `Perf.measure` and `span.child` make a parent scope,
// and each span that begins and ends inside it adds its time to the parent's totals by name.
import CPerfShims
import Glibc
import Synchronization

/// One child name's totals inside a parent: what the parent's over-budget line lists.
public struct ChildTotal: Sendable, Equatable {
    /// The child span's name; ``ChildScopes/otherName`` for the names past the first eight.
    public var name: String
    /// Children of the name that ended inside the parent.
    public var count: UInt64
    /// Their time, summed.
    public var totalNanos: UInt64
    /// The longest of them.
    public var maxNanos: UInt64

    public init(name: String, count: UInt64, totalNanos: UInt64, maxNanos: UInt64) {
        self.name = name
        self.count = count
        self.totalNanos = totalNanos
        self.maxNanos = maxNanos
    }
}

/// A fixed pool of parent scopes, allocated once and never freed, so a child that ends late (its
/// span moved out of the parent's body) can never touch freed memory: a scope reference carries
/// its slot's generation, and a child whose parent already ended finds another generation there
/// and adds nothing.
///
/// A slot holds its generation (odd while in use), then for each of ``namesPerScope`` names a word
/// (the name's address and length; 0 while free) and its count, total and maximum, then the same
/// three for `other`. Children add with relaxed atomics, from any thread: an `async let` or a task
/// group's children end at once.
///
/// Which scope a span's begin joins: the innermost synchronous `Perf.measure` on its thread (a
/// thread-local), else the innermost asynchronous one of its task (``ParentScope/current``, a task-local that
/// child tasks inherit), else none (a root). Nesting is never inferred from the thread alone.
///
/// `@unchecked Sendable`: slots are raw memory touched only through atomics; the free list has
/// its own lock.
public final class ChildScopes: @unchecked Sendable {
    /// The pool every recorder shares: parent spans open at once, across all threads and tasks.
    public static let shared = ChildScopes(capacity: 16_384)
    /// The names a parent lists before it folds the rest into `other`.
    public static let namesPerScope = 8
    /// The name of the entry that folds a parent's children past its first eight names.
    public static let otherName = "other"
    static let wordsPerSlot = 1 + namesPerScope + 3 * (namesPerScope + 1)
    let capacity: Int
    /// Anonymous memory, so the slots no parent used yet cost no resident page.
    private let words: UnsafeMutablePointer<UInt64>
    private let mappedBytes: Int
    /// Free slot indices in a ring, oldest freed first, so a slot is reused as late as possible.
    private let free: Mutex<FreeRing>

    struct FreeRing: ~Copyable {
        let slots: UnsafeMutablePointer<Int32>
        let capacity: Int
        var first = 0
        var count: Int

        init(capacity: Int) {
            self.capacity = capacity
            slots = UnsafeMutablePointer<Int32>.allocate(capacity: capacity)
            for index in 0..<capacity { slots[index] = Int32(index) }
            count = capacity
        }

        deinit { slots.deallocate() }

        mutating func pop() -> Int? {
            guard count > 0 else { return nil }
            let index = Int(slots[first])
            first = (first + 1) % capacity
            count -= 1
            return index
        }

        mutating func push(_ index: Int) {
            slots[(first + count) % capacity] = Int32(index)
            count += 1
        }
    }
    /// Scopes that found no free slot (their children are not counted).
    public let exhausted = Atomic<UInt64>(0)

    init(capacity: Int) {
        self.capacity = min(capacity, 1 << 16)
        mappedBytes = self.capacity * Self.wordsPerSlot * 8
        let mapped = mmap(nil, mappedBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
        precondition(mapped != nil && mapped != MAP_FAILED, "ChildScopes: cannot map \(mappedBytes) bytes")
        words = mapped!.bindMemory(to: UInt64.self, capacity: self.capacity * Self.wordsPerSlot)
        free = Mutex(FreeRing(capacity: self.capacity))
    }

    deinit { munmap(words, mappedBytes) }

    private func slot(_ index: Int) -> UnsafeMutablePointer<UInt64> { words + index * Self.wordsPerSlot }

    /// A fresh scope; ``ParentScope/exhausted`` when every slot is in use (counted in ``exhausted``).
    public func acquire() -> UInt64 {
        guard let index = free.withLock({ $0.pop() }) else {
            exhausted.add(1, ordering: .relaxed)
            return ParentScope.exhausted
        }
        let base = slot(index)
        (base + 1).update(repeating: 0, count: Self.wordsPerSlot - 1)
        let generation = perf_atomic_load_u64(base) &+ 1
        perf_atomic_store_u64_release(base, generation)
        return UInt64(index) | (generation & 0xFFFF_FFFF_FFFF) << 16
    }

    private func resolve(_ scope: UInt64) -> UnsafeMutablePointer<UInt64>? {
        let index = Int(scope & 0xFFFF)
        guard scope > ParentScope.exhausted, index < capacity else { return nil }
        let base = slot(index)
        return perf_atomic_load_u64_acquire(base) & 0xFFFF_FFFF_FFFF == scope >> 16 ? base : nil
    }

    /// Adds one child's time to `scope`'s totals of its name (nothing when the scope has ended).
    public func add(_ scope: UInt64, name: StaticString, nanos: UInt64) {
        guard let base = resolve(scope) else { return }
        let names = base + 1
        let word = Self.nameWord(name)
        var entry = Self.namesPerScope
        if word != 0 {
            for index in 0..<Self.namesPerScope {
                var current = perf_atomic_load_u64(names + index)
                if current == 0 {
                    if perf_atomic_cas_u64(names + index, 0, word) != 0 {
                        entry = index
                        break
                    }
                    current = perf_atomic_load_u64(names + index)
                }
                if current == word {
                    entry = index
                    break
                }
            }
        }
        let totals = base + 1 + Self.namesPerScope + 3 * entry
        perf_atomic_add_u64(totals, 1)
        perf_atomic_add_u64(totals + 1, nanos)
        var longest = perf_atomic_load_u64(totals + 2)
        while nanos > longest, perf_atomic_cas_u64(totals + 2, longest, nanos) == 0 {
            longest = perf_atomic_load_u64(totals + 2)
        }
    }

    /// Ends `scope`: its totals by name (the same name from two modules merged, `other` last), and
    /// its slot freed for reuse.
    public func release(_ scope: UInt64) -> [ChildTotal] {
        guard let base = resolve(scope) else { return [] }
        var totals: [ChildTotal] = []
        for entry in 0...Self.namesPerScope {
            let values = base + 1 + Self.namesPerScope + 3 * entry
            let count = perf_atomic_load_u64(values)
            guard count > 0 else { continue }
            let name =
                entry < Self.namesPerScope ? Self.name(of: perf_atomic_load_u64(base + 1 + entry)) : Self.otherName
            let total = ChildTotal(
                name: name, count: count, totalNanos: perf_atomic_load_u64(values + 1),
                maxNanos: perf_atomic_load_u64(values + 2))
            if let same = totals.firstIndex(where: { $0.name == name }) {
                totals[same].count += total.count
                totals[same].totalNanos += total.totalNanos
                totals[same].maxNanos = max(totals[same].maxNanos, total.maxNanos)
            } else {
                totals.append(total)
            }
        }
        // The next generation: a child of this scope that ends later adds nothing. (One already
        // past `resolve` when this runs may still add; the slot is zeroed when next acquired, and
        // the free list hands it out again only after every other free slot.)
        perf_atomic_store_u64_release(base, perf_atomic_load_u64(base) &+ 1)
        let index = Int(scope & 0xFFFF)
        free.withLock { $0.push(index) }
        return totals
    }

    /// A name's address and length in one word (a name that is not a pointer folds into `other`).
    @inlinable
    package static func nameWord(_ name: StaticString) -> UInt64 {
        guard name.hasPointerRepresentation, name.utf8CodeUnitCount < 1 << 16 else { return 0 }
        return UInt64(UInt(bitPattern: name.utf8Start)) << 16 | UInt64(name.utf8CodeUnitCount)
    }

    package static func name(of word: UInt64) -> String {
        guard let start = UnsafePointer<UInt8>(bitPattern: UInt(word >> 16)) else { return otherName }
        return String(decoding: UnsafeBufferPointer(start: start, count: Int(word & 0xFFFF)), as: UTF8.self)
    }
}

/// Which parent scope a beginning span joins, and the scope values with a meaning of their own.
///
/// A caseless enum rather than statics of ``ChildScopes``: calling a class's static method passes
/// its metadata, which the caller fetches through an accessor call on every span's begin.
public enum ParentScope {
    /// The thread-local's value inside a synchronous measure whose body began no child yet.
    /// (Computed, not a stored `static let`: a stored one is reached through an accessor call
    /// from another module.)
    @inlinable public static var pending: UInt64 { 1 }
    /// The scope of a parent that found every slot in use: its children are not counted, and its
    /// line says so (`childrenUncounted`).
    @inlinable public static var exhausted: UInt64 { 2 }

    /// The innermost asynchronous parent of the running task; 0 for none.
    @TaskLocal public static var current: UInt64 = 0

    /// The parent a span beginning now joins: the thread's synchronous measure (given a scope on
    /// its first child), else the task's asynchronous one, else 0.
    /// Inline, a root span outside every measure costs a thread-local load and a global load.
    @inlinable @inline(__always)
    public static func forBegin() -> UInt64 {
        let scope = perf_scope_get()
        if scope > pending { return scope }
        return scope == 0 && perf_async_scopes_load() == 0 ? 0 : forBeginSlowly(scope)
    }

    /// A measure's first child (the scope is made now) or a task's asynchronous parent, out of
    /// line.
    @usableFromInline @inline(never)
    static func forBeginSlowly(_ scope: UInt64) -> UInt64 {
        scope == pending ? claimPending() : current
    }

    /// A child's time added to its parent's totals; out of line, so a root span's end carries
    /// none of it.
    @usableFromInline @inline(never)
    static func childEnded(in parent: UInt64, name: StaticString, nanos: UInt64) {
        ChildScopes.shared.add(parent, name: name, nanos: nanos)
    }

    /// A scope whose span ends under budget (or into nothing): freed, its totals unused.
    @usableFromInline @inline(never)
    package static func endUnused(_ scope: UInt64) { _ = ChildScopes.shared.release(scope) }

    /// The first child of a synchronous measure: the measure's scope is made now, so a measure
    /// with no children costs two thread-local stores.
    static func claimPending() -> UInt64 {
        let scope = ChildScopes.shared.acquire()
        perf_scope_set(scope)
        return scope
    }
}
