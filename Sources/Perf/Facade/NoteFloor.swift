// The per-name floor on notes: a reconnect storm writes one line, and the count of what the floor
// held back rides on the next line that passes.
import Synchronization

/// Decides which notes pass the floor; time comes from the caller so tests advance it.
final class NoteFloor: Sendable {
    /// What to do with one note.
    enum Decision: Equatable {
        /// Write it, carrying the number of notes of the same name suppressed since the last line.
        case write(suppressedBefore: Int)
        /// Count it and write nothing.
        case suppress
    }

    private struct Entry {
        var lastWrittenNanos: UInt64
        var suppressed: Int
    }

    private let floorNanos: UInt64
    private let entries = Mutex<[String: Entry]>([:])

    init(floorSeconds: Double) {
        floorNanos = floorSeconds > 0 ? UInt64(min(floorSeconds, 1e9) * 1e9) : 0
    }

    func decide(name: String, nowNanos: UInt64) -> Decision {
        entries.withLock { entries in
            guard var entry = entries[name] else {
                entries[name] = Entry(lastWrittenNanos: nowNanos, suppressed: 0)
                return .write(suppressedBefore: 0)
            }
            if nowNanos &- entry.lastWrittenNanos < floorNanos && nowNanos >= entry.lastWrittenNanos {
                entry.suppressed += 1
                entries[name] = entry
                return .suppress
            }
            let carried = entry.suppressed
            entries[name] = Entry(lastWrittenNanos: nowNanos, suppressed: 0)
            return .write(suppressedBefore: carried)
        }
    }
}
