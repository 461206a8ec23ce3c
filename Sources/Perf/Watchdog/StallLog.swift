// The watchdog's own late wake-ups, kept so that a ping window can subtract the part of it during
// which the watchdog (and so, usually, the whole process) could not run.

/// A fixed ring of recent stall intervals `[scheduled wake, actual wake)`.
///
/// Each interval is measured against the wake time the watchdog was sleeping toward, before the
/// schedule is re-synchronised: measuring after re-synchronising reads zero lateness for exactly
/// the wake-up that followed a SIGSTOP and lets a false hang through.
struct StallLog {
    /// Stalls shorter than this are scheduler noise and are not kept.
    static let floorNanos: UInt64 = 1_000_000
    /// Lateness every wake-up is allowed before it counts as a stall: on a busy host the watchdog
    /// thread waits a few milliseconds for a core while the target goes on blocking (a spinning
    /// or sleeping culprit does not pause because the watchdog is late), so subtracting that
    /// wait would shorten real hangs. Stops, debuggers and suspends are far longer.
    static let allowanceNanos: UInt64 = 10_000_000
    private var starts: [UInt64]
    private var ends: [UInt64]
    private var suspends: [UInt64]
    private var next = 0
    private var filled = 0

    /// Preallocates room for `capacity` intervals (the oldest are overwritten).
    init(capacity: Int = 256) {
        starts = Array(repeating: 0, count: capacity)
        ends = Array(repeating: 0, count: capacity)
        suspends = Array(repeating: 0, count: capacity)
    }

    /// Records the watchdog waking at `actual` for a wake-up scheduled at `scheduled`, while
    /// CLOCK_BOOTTIME − CLOCK_MONOTONIC grew by `suspendedNanos` since the previous wake-up.
    mutating func record(scheduled: UInt64, actual: UInt64, suspendedNanos: UInt64 = 0) {
        let start = scheduled + Self.allowanceNanos
        guard actual > start, actual - start >= Self.floorNanos else { return }
        starts[next] = start
        ends[next] = actual
        suspends[next] = suspendedNanos
        next = (next + 1) % starts.count
        filled = min(filled + 1, starts.count)
    }

    /// Total stall inside `[from, to)`.
    func overlap(from: UInt64, to: UInt64) -> UInt64 {
        var total: UInt64 = 0
        for index in 0..<filled {
            let start = max(starts[index], from)
            let end = min(ends[index], to)
            if end > start { total += end - start }
        }
        return total
    }

    /// The longest single stall inside `[from, to)`.
    func longest(from: UInt64, to: UInt64) -> UInt64 {
        var longest: UInt64 = 0
        for index in 0..<filled {
            let start = max(starts[index], from)
            let end = min(ends[index], to)
            if end > start { longest = max(longest, end - start) }
        }
        return longest
    }

    /// Host suspend time recorded with the stalls that overlap `[from, to)`.
    func suspended(from: UInt64, to: UInt64) -> UInt64 {
        var total: UInt64 = 0
        for index in 0..<filled where min(ends[index], to) > max(starts[index], from) {
            total += suspends[index]
        }
        return total
    }

    /// Forgets every interval (after a pause: old stalls cannot overlap new pings).
    mutating func removeAll() {
        next = 0
        filled = 0
    }
}
