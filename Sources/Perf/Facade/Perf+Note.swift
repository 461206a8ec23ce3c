// Noteworthy events and the process's time to ready.
import Glibc
import PerfCore
import Synchronization

extension Perf {
    /// Records a noteworthy event (`socket.reconnect`, `cache.flush`).
    ///
    /// Notes of one name are floored (``Configuration/noteFloorSeconds``, 30 s by default): a reconnect
    /// storm writes one line per floor window, and the number of notes held back rides on the next
    /// line that passes as `suppressedCount`. When no note of the name passes by the window's end, a
    /// timer of Perf's own (not the calling thread) writes a line that carries the count, with
    /// `count` 0 as it is no note itself; ``shutdown()`` writes the counts still held.
    ///
    /// - Parameters:
    ///   - name: A static name.
    ///   - detail: Context; privacy-filtered like a span's detail.
    public static func note(_ name: StaticString, detail: String? = nil) {
        guard let runtime = PerfState.runtime() else { return }
        Probes.note(name)
        let text = name.description
        guard
            case .write(let suppressed) = runtime.noteFloor.decide(name: text, nowNanos: runtime.clock.monotonicNanos())
        else { return }
        runtime.recorder.pipeline.emit(
            .note(
                NoteRecord(
                    name: text, detail: detail, suppressedCount: suppressed, wallNanos: runtime.clock.wallNanos())))
    }

    /// Records the time from process start (the kernel's start time in `/proc/self/stat`) to
    /// now as the span `boot`, always written to the ledger, and tells systemd the service is
    /// ready. Only the first call counts.
    ///
    /// Under systemd (`$NOTIFY_SOCKET` set, as for a `Type=notify` unit) it sends `READY=1`, one
    /// datagram to that socket, as `sd_notify(0, "READY=1")` would, without libsystemd. The send
    /// never blocks; a failure is reported once on stderr. Like every call before
    /// ``install(_:)``, it does nothing when Perf is not installed.
    public static func markReady(fileID: StaticString = #fileID, line: UInt = #line) {
        guard let runtime = PerfState.runtime() else { return }
        guard PerfState.readyMarked.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
        else { return }
        if let notifier = runtime.notifier {
            let failure = notifier.send("READY=1")
            if failure != 0 {
                PerfState.reportToStandardError(
                    "perf: READY=1 to systemd (NOTIFY_SOCKET) failed: \(String(cString: strerror(failure)))")
            }
        }
        guard let elapsed = ProcessStart.elapsedNanos() else { return }
        runtime.histograms.record(name: "boot", nanos: elapsed)
        let wall = runtime.clock.wallNanos()
        runtime.recorder.pipeline.emit(
            .spanEnded(
                SpanEndRecord(
                    id: 0, name: "boot",
                    site: CallSite(fileID: fileID, line: UInt32(truncatingIfNeeded: line)).description,
                    startWallNanos: wall >= elapsed ? wall - elapsed : 0, durationNanos: elapsed, budgetNanos: nil,
                    exit: .success)))
    }
}

extension PerfState {
    static let readyMarked = Atomic<Bool>(false)
}
