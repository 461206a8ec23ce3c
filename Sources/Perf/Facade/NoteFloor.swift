// The per-name floor on notes: a reconnect storm writes one line per floor window, and the count of
// what the floor held back reaches the ledger by the window's end at the latest.
import PerfCore
import Synchronization

/// Decides which notes pass the floor and keeps the count of those it holds back.
///
/// A name's window opens with a line of it and lasts `floorSeconds`. The first note of a window is
/// written; the rest are counted. The count rides on the next note of the name once the window has
/// ended; when none comes by then, `timer` fires at the window's end and ``takeEnded(nowNanos:)``
/// hands the count over for a line of its own (``line(_:session:wallNanos:)``), which opens the
/// next window, so a name never writes more than one line per window. At shutdown ``takeAll()``
/// hands over whatever is still held. Time comes from the caller, so tests advance it.
final class NoteFloor: Sendable {
    /// What to do with one note.
    enum Decision: Equatable {
        /// Write it, carrying the number of notes of the same name held back since the last line.
        case write(suppressedBefore: Int)
        /// Count it and write nothing.
        case suppress
    }

    /// Notes of one name the floor held back and no line has counted yet.
    struct HeldBack: Equatable {
        let name: String
        let count: Int
    }

    private struct Entry {
        /// When the name's last line was written: its window's start.
        var windowStartNanos: UInt64
        var held: Int
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// The deadline `timer` is armed for, if any.
        var armedNanos: UInt64?
    }

    private let floorNanos: UInt64
    private let state = Mutex<State>(State())
    /// Fires at the end of the earliest window that holds notes back; nil when nobody would read
    /// the count before shutdown (no ledger), or in tests of the decisions alone.
    let timer: (any ExpiryTimer)?

    init(floorSeconds: Double, timer: (any ExpiryTimer)? = nil) {
        floorNanos = floorSeconds > 0 ? UInt64(min(floorSeconds, 1e9) * 1e9) : 0
        self.timer = timer
    }

    func decide(name: String, nowNanos: UInt64) -> Decision {
        state.withLock { state in
            guard var entry = state.entries[name] else {
                state.entries[name] = Entry(windowStartNanos: nowNanos, held: 0)
                return .write(suppressedBefore: 0)
            }
            if nowNanos >= entry.windowStartNanos && nowNanos - entry.windowStartNanos < floorNanos {
                entry.held += 1
                state.entries[name] = entry
                // The window's first held note: its end must come to the timer. Arming under the
                // lock keeps the earliest deadline armed when two names race.
                if entry.held == 1 { arm(&state, at: entry.windowStartNanos &+ floorNanos) }
                return .suppress
            }
            state.entries[name] = Entry(windowStartNanos: nowNanos, held: 0)
            return .write(suppressedBefore: entry.held)
        }
    }

    /// The counts of the windows that ended by `nowNanos` with notes held back, each to be written
    /// as a line that opens the name's next window; re-arms the timer for the next such window.
    func takeEnded(nowNanos: UInt64) -> [HeldBack] {
        state.withLock { state in
            var ended: [HeldBack] = []
            var next: UInt64?
            for (name, entry) in state.entries where entry.held > 0 {
                // A reading from before the window's start (the clock was read before another thread
                // opened it) is inside it here: only a window that surely ended hands its count over.
                let end = entry.windowStartNanos &+ floorNanos
                if nowNanos < end {
                    next = min(next ?? end, end)
                } else {
                    ended.append(HeldBack(name: name, count: entry.held))
                    state.entries[name] = Entry(windowStartNanos: nowNanos, held: 0)
                }
            }
            state.armedNanos = nil
            if let next { arm(&state, at: next) } else { timer?.disarm() }
            return ended.sorted { $0.name < $1.name }
        }
    }

    /// Every count still held, whether its window has ended or not (shutdown); disarms the timer.
    func takeAll() -> [HeldBack] {
        state.withLock { state in
            var held: [HeldBack] = []
            for (name, entry) in state.entries where entry.held > 0 {
                held.append(HeldBack(name: name, count: entry.held))
                state.entries[name]?.held = 0
            }
            state.armedNanos = nil
            timer?.disarm()
            return held.sorted { $0.name < $1.name }
        }
    }

    /// The ledger line of a count no note carried: a `note` line with `count` 0 (it stands for no
    /// note of its own) and the count as `suppressedCount`, as on a note that carries one.
    static func line(_ held: HeldBack, session: String, wallNanos: UInt64) -> LedgerEvent {
        var event = LedgerEvent(
            kind: .note, name: held.name, session: session, timestampMs: Int64(wallNanos / 1_000_000))
        event.count = 0
        event.extra["suppressedCount"] = .int(Int64(held.count))
        return event
    }

    private func arm(_ state: inout State, at deadline: UInt64) {
        guard let timer, state.armedNanos.map({ deadline < $0 }) ?? true else { return }
        state.armedNanos = deadline
        timer.arm(atMonotonicNanos: deadline)
    }
}
