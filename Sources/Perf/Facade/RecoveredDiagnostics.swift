// A crashed session's span memory, filed as its last diagnostic payload: its histograms and its
// flight recorder's spans up to the kill, in the format every reader already knows.
import Foundation
import PerfCore

enum RecoveredDiagnostics {
    /// The payload's reason.
    static let reason = "recovered"

    /// The snapshot a crashed session's span memory makes, or nil when it left none. A session
    /// that ended cleanly filed its own at shutdown (and removed its span memory before its end).
    static func snapshot(for recovered: RecoveredSession) -> DiagnosticSnapshot? {
        guard case .crashed = recovered.status, let memory = recovered.spanMemory, let info = recovered.info
        else { return nil }
        let takenAtMs = Int64(memory.lastAliveWallNanos / 1_000_000)
        var intervals: SpanIntervals?
        if memory.ringCapacity > 0 {
            intervals = SpanIntervals(
                snapshot: FlightRecorder.Snapshot(entries: memory.spans, recorded: memory.recorded),
                capacity: memory.ringCapacity, monotonicNanos: memory.clockPair.monotonicNanos,
                wallNanos: memory.clockPair.wallNanos, threadName: { $0 == info.pid ? "main" : "thread \($0)" })
        }
        return DiagnosticSnapshot(
            session: recovered.id, takenAtMs: takenAtMs, reason: reason,
            app: info.app,
            host: .current(), process: ProcessFigures(), spans: memory.histograms, hangs: [:], intervals: intervals,
            spanSites: memory.sites, spanTallies: memory.tallies)
    }

    /// Files the payload with its `diagnostic` line. Best effort: a payload that cannot be written
    /// costs the crashed session its histograms in the report, never the recovery itself.
    static func write(_ recovered: RecoveredSession, directory: URL, ledger: LedgerWriter) {
        guard let snapshot = snapshot(for: recovered) else { return }
        let name = DiagnosticFiles.fileName(takenAtMs: snapshot.takenAtMs, session: recovered.id)
        guard (try? DiagnosticFiles.write(snapshot.jsonBytes, name: name, dataDirectory: directory.path)) != nil
        else { return }
        var line = LedgerEvent(kind: .diagnostic, name: reason, session: recovered.id, timestampMs: snapshot.takenAtMs)
        line.extra["path"] = .string(DiagnosticFiles.directoryName + "/" + name)
        try? ledger.append(line)
    }
}
