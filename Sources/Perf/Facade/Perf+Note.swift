// Noteworthy events and the process's time to ready.
import PerfCore
import Synchronization

extension Perf {
    /// Records a noteworthy event (`socket.reconnect`, `cache.flush`).
    ///
    /// Notes of one name are floored (``Configuration/noteFloorSeconds``, 30 s by default): a reconnect
    /// storm writes one line, and the number of notes held back rides on the next line that
    /// passes as `suppressedCount`.
    ///
    /// - Parameters:
    ///   - name: A static name.
    ///   - detail: Context; privacy-filtered like a span's detail.
    public static func note(_ name: StaticString, detail: String? = nil) {
        guard let runtime = PerfState.runtime() else { return }
        let text = name.description
        guard case .write(let suppressed) = runtime.noteFloor.decide(name: text, nowNanos: runtime.clock.monotonicNanos())
        else { return }
        runtime.recorder.pipeline.emit(
            .note(NoteRecord(name: text, detail: detail, suppressedCount: suppressed, wallNanos: runtime.clock.wallNanos())))
    }

    /// Records the time from process start (the kernel's start time in `/proc/self/stat`) to
    /// now as the span `boot`, always written to the ledger. Only the first call counts.
    public static func markReady(fileID: StaticString = #fileID, line: UInt = #line) {
        guard let runtime = PerfState.runtime(), let elapsed = ProcessStart.elapsedNanos() else { return }
        guard PerfState.readyMarked.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
        else { return }
        runtime.histograms.record(name: "boot", nanos: elapsed)
        let wall = runtime.clock.wallNanos()
        runtime.recorder.pipeline.emit(
            .spanEnded(
                SpanEndRecord(
                    id: 0, name: "boot", site: CallSite(fileID: fileID, line: UInt32(truncatingIfNeeded: line)).description,
                    startWallNanos: wall >= elapsed ? wall - elapsed : 0, durationNanos: elapsed, budgetNanos: nil,
                    exit: .success)))
    }
}

extension PerfState {
    static let readyMarked = Atomic<Bool>(false)
}
