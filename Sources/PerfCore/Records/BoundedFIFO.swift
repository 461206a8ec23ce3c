// The queue under a sink's delivery: a ring that grows by doubling up to its bound, never past
// it, and never moves an element except when it grows.

/// A first-in, first-out queue of at most `capacity` elements, for one lock's owner.
///
/// The array it replaces compacted by moving its live elements to the front once the consumed
/// prefix dominated, so it held up to twice the bound, rounded up by its doubling to a power of
/// two (a 4,096-record backlog reached 8,192 slots, 0.8 MiB, with the buffers it outgrew left free
/// in the allocator), and each compaction moved up to the whole bound while the emitters waited
/// on the lock. The ring holds at most `capacity` slots: it starts small, doubles only when full
/// (a queue that stays shallow stays small), and otherwise never moves an element.
///
/// Not thread-safe: every call must hold the owner's lock.
final class BoundedFIFO<Element> {
    /// The most elements it holds.
    let capacity: Int
    private var storage: UnsafeMutablePointer<Element>?
    /// Slots allocated: a power of two up to `capacity`, or `capacity` itself.
    private(set) var allocated = 0
    /// The slot of the oldest element.
    private var head = 0
    /// Elements held.
    private(set) var count = 0

    /// The first allocation's slots.
    static var initialSlots: Int { 16 }

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    deinit {
        guard let storage else { return }
        while count > 0 { _ = removeFirst() }
        storage.deallocate()
    }

    var isEmpty: Bool { count == 0 }

    /// The oldest element, left in place.
    var first: Element? {
        guard count > 0, let storage else { return nil }
        return storage[head]
    }

    /// Appends `element` at the back; false (and nothing stored) when the queue is full.
    func append(_ element: Element) -> Bool {
        guard count < capacity else { return false }
        if count == allocated { grow() }
        guard let storage else { return false }
        var tail = head + count
        if tail >= allocated { tail -= allocated }
        (storage + tail).initialize(to: element)
        count += 1
        return true
    }

    /// Removes and returns the oldest element, or nil when empty.
    func removeFirst() -> Element? {
        guard count > 0, let storage else { return nil }
        let element = (storage + head).move()
        head += 1
        if head == allocated { head = 0 }
        count -= 1
        return element
    }

    /// Doubles the slots (up to `capacity`), moving the elements to the front in order.
    private func grow() {
        let slots = min(capacity, max(Self.initialSlots, allocated * 2))
        let fresh = UnsafeMutablePointer<Element>.allocate(capacity: slots)
        if let storage {
            let firstRun = min(count, allocated - head)
            fresh.moveInitialize(from: storage + head, count: firstRun)
            (fresh + firstRun).moveInitialize(from: storage, count: count - firstRun)
            storage.deallocate()
        }
        storage = fresh
        allocated = slots
        head = 0
    }
}
