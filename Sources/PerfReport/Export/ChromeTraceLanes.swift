// Lanes for Chrome trace slices: complete events on one thread must nest, so slices that overlap
// without nesting (a keyed span ended on another thread, two slow requests in the ledger) move
// to extra lanes instead of being dropped or drawn wrongly by the viewers.
import Perf

enum ChromeTraceLanes {
    /// A slice to place.
    struct Slice {
        var start: Int64
        var duration: Int64
        /// How much later the slice may start than `start` says: a ledger line's `ts` is cut to
        /// the millisecond, so its true end, and start, lie up to 1 ms later.
        var slack: Int64 = 0
        /// The position of this slice's parent in the list, when it has one: its lane is tried
        /// first, so a child nests under its parent wherever it fits there.
        var parent: Int? = nil
    }

    /// Where a slice went: its lane (0 first) and its start, moved within its slack when that
    /// lets it follow the slice before it on the lane instead of overlapping it.
    struct Placement: Equatable {
        var lane: Int
        var start: Int64
    }

    /// Places each slice on the first lane where it starts after the lane's open slices end, or
    /// lies inside the innermost one, so every lane nests properly; a slice with a parent tries
    /// its parent's lane first.
    ///
    /// - Parameter slices: Ordered by start, and longest first among equal starts, so a parent
    ///   comes before the children that start with it.
    /// - Returns: One placement per slice, in the same order.
    static func assign(_ slices: [Slice]) -> [Placement] {
        // Per lane, the slices still open (start, end), outermost first.
        var open: [[(start: Int64, end: Int64)]] = []
        var placements: [Placement] = []
        placements.reserveCapacity(slices.count)
        for slice in slices {
            var placed: Placement?
            let parentLane = slice.parent.flatMap { $0 < placements.count ? placements[$0].lane : nil }
            for lane in (parentLane.map { [$0] } ?? []) + open.indices.filter({ $0 != parentLane }) {
                guard let start = fit(slice, on: &open[lane]) else { continue }
                open[lane].append((start, start + slice.duration))
                placed = Placement(lane: lane, start: start)
                break
            }
            if placed == nil {
                open.append([(slice.start, slice.start + slice.duration)])
                placed = Placement(lane: open.count - 1, start: slice.start)
            }
            placements.append(placed!)
        }
        return placements
    }

    /// The start at which `slice` nests on a lane whose open slices are `stack` (closing those
    /// that ended), or nil when it cannot.
    static func fit(_ slice: Slice, on stack: inout [(start: Int64, end: Int64)]) -> Int64? {
        var start = slice.start
        while let innermost = stack.last, innermost.end <= start { stack.removeLast() }
        if let innermost = stack.last, start + slice.duration > innermost.end || start < innermost.start {
            // It overlaps the innermost slice: follow it instead when the slack allows.
            // Closing slices up to the moved start is kept only if the slice then fits: a later
            // slice may start before that moved start and still overlap them.
            guard innermost.end - slice.start <= slice.slack else { return nil }
            start = innermost.end
            var moved = stack
            while let enclosing = moved.last, enclosing.end <= start { moved.removeLast() }
            if let enclosing = moved.last, start + slice.duration > enclosing.end { return nil }
            stack = moved
        }
        return start
    }
}
