// Writing what the note floor held back: at a floor window's end, from the floor's timer, and at
// shutdown.
import PerfCore

extension PerfRuntime {
    /// The note floor's timer for `clock`: a dispatch timer on a queue of its own beside the real
    /// clock, so no host thread waits on the line; beside a test's clock, a timer that fires only
    /// when the test says so (a dispatch timer would misread that clock's deadlines).
    static func noteFloorTimer(clock: any PerfClock) -> any ExpiryTimer {
        clock is SystemClock ? DispatchExpiryTimer(label: "perf.note-floor") : ManualExpiryTimer()
    }

    /// Writes a line for every floor window that has ended with notes held back and no note of its
    /// name to carry the count: what the floor's timer runs.
    func writeEndedNoteWindows() {
        writeHeldBackNotes(noteFloor.takeEnded(nowNanos: clock.monotonicNanos()))
    }

    /// Writes one line per name with the count the floor held back (``NoteFloor/line(_:session:wallNanos:)``).
    /// Straight to the ledger: the line is not a note, so nothing else the pipeline feeds counts it.
    func writeHeldBackNotes(_ held: [NoteFloor.HeldBack]) {
        guard let ledger, !held.isEmpty else { return }
        let wallNanos = clock.wallNanos()
        for count in held {
            // A ledger that cannot take the line counts it as dropped, as for any other line.
            try? ledger.append(NoteFloor.line(count, session: sessionID, wallNanos: wallNanos))
        }
    }
}
