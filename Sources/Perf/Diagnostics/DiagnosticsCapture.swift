// Taking a snapshot of the installed runtime: on demand, on a timer, and at shutdown.
import Dispatch
import PerfCore
import Synchronization

/// Takes diagnostic snapshots for a runtime and runs the periodic timer.
enum DiagnosticsCapture {
    /// Takes a snapshot, files it and writes its `diagnostic` ledger line.
    ///
    /// - Returns: The payload's path, or `nil` when the runtime does not record to disk.
    static func capture(_ runtime: PerfRuntime, reason: String) throws(Perf.ReportError) -> String? {
        guard let directory = runtime.directory else { return nil }
        let takenAtMs = Int64(runtime.clock.wallNanos() / 1_000_000)
        let snapshot = DiagnosticSnapshot(
            session: runtime.sessionID, takenAtMs: takenAtMs, reason: reason, app: runtime.configuration.app,
            host: .current(), process: .current(), spans: runtime.histograms.snapshot(),
            hangs: PerfState.hangHistograms.snapshot(), intervals: runtime.recentSpans(),
            spanSites: runtime.histograms.sites(), spanTallies: runtime.histograms.tallies())
        let name = DiagnosticFiles.fileName(takenAtMs: takenAtMs, session: runtime.sessionID)
        let path = try DiagnosticFiles.write(snapshot.jsonBytes, name: name, dataDirectory: directory.path)
        var line = LedgerEvent(kind: .diagnostic, name: reason, session: runtime.sessionID, timestampMs: takenAtMs)
        line.extra["path"] = .string(DiagnosticFiles.directoryName + "/" + name)
        let dropped = runtime.histograms.droppedRecordCount
        if dropped > 0 { line.extra["droppedSpanRecords"] = .int(Int64(clamping: dropped)) }
        if let profiles = runtime.sampler?.slots.dropped, profiles > 0 {
            line.extra["droppedSpanProfiles"] = .int(Int64(clamping: profiles))
        }
        // The payload is on disk either way; a ledger that cannot take the line only loses the pointer.
        try? runtime.ledger?.append(line)
        return path
    }

    /// The periodic timer of the installed runtime, if any.
    private static let timer = Mutex<TimerHandle?>(nil)

    /// A dispatch timer source as a Sendable value: sources are thread-safe (cancel may be called
    /// from any thread), the SDK just does not say so.
    private final class TimerHandle: @unchecked Sendable {
        let source: any DispatchSourceTimer
        init(_ source: any DispatchSourceTimer) { self.source = source }
    }

    /// Starts the periodic snapshots of `runtime` (every `diagnosticsIntervalSeconds`; none when
    /// that is not positive or the runtime does not record to disk).
    static func startSchedule(_ runtime: PerfRuntime) {
        let seconds = runtime.configuration.diagnosticsIntervalSeconds
        guard runtime.directory != nil, seconds > 0, seconds.isFinite else { return }
        let source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "perf.diagnostics", qos: .utility))
        let interval = DispatchTimeInterval.milliseconds(Int(min(seconds, 1e9 / 1000) * 1000))
        source.schedule(deadline: .now() + interval, repeating: interval, leeway: .seconds(1))
        source.setEventHandler {
            // Only the runtime still installed snapshots; a timer that fires during shutdown is a no-op.
            guard let current = PerfState.runtime(), current === runtime else { return }
            _ = try? capture(current, reason: "periodic")
        }
        source.resume()
        let previous = timer.withLock { slot in
            let previous = slot
            slot = TimerHandle(source)
            return previous
        }
        previous?.source.cancel()
    }

    /// Stops the periodic snapshots.
    static func stopSchedule() {
        let source = timer.withLock { slot in
            let source = slot
            slot = nil
            return source
        }
        source?.source.cancel()
    }
}
