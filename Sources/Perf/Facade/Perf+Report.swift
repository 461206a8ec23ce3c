// The facade's report calls: a diagnostic snapshot on demand, and the report of the data directory.
import Foundation

extension Perf {
    /// Takes a diagnostic snapshot now: process figures from `/proc/self` and the span and hang
    /// histograms, filed under `perf-diagnostics/` with a `diagnostic` ledger line.
    ///
    /// Snapshots are also taken every `diagnosticsIntervalSeconds` (one hour by default) and at
    /// ``shutdown()``; the folder keeps the newest 24.
    ///
    /// - Returns: The payload file.
    /// - Throws: ``ReportError`` `.notRecording` when Perf is not installed or records in memory
    ///   only (as ``prepareReport(to:)`` does), `.writeFailed` when the payload cannot be written.
    @discardableResult
    public static func captureDiagnostics() throws(ReportError) -> URL {
        let runtime = try recordingRuntime()
        guard let path = try DiagnosticsCapture.capture(runtime, reason: "on-demand") else { throw notRecording }
        return URL(fileURLWithPath: path)
    }

    /// The runtime when Perf records to a directory; both report calls refuse the same way otherwise.
    private static func recordingRuntime() throws(ReportError) -> PerfRuntime {
        guard let runtime = PerfState.runtime(), runtime.directory != nil else { throw notRecording }
        return runtime
    }

    private static var notRecording: ReportError {
        ReportError(
            .notRecording, path: "", "no data directory to report on: call Perf.install with recording enabled first")
    }

    /// Writes `performance-report.json` for the data directory: takes a fresh diagnostic
    /// snapshot, then builds exactly as `perf-report build --dir <data directory>` does, so both
    /// give the same bytes.
    ///
    /// ```swift
    /// let url = try Perf.prepareReport()
    /// ```
    ///
    /// - Parameter url: Where to write; default `performance-report.json` in the data directory
    ///   (the builder never reads that file back).
    /// - Returns: The report's location.
    /// - Throws: ``ReportError`` `.notRecording` when Perf is not installed or records in memory
    ///   only, or the builder's and writer's errors.
    @discardableResult
    public static func prepareReport(to url: URL? = nil) throws(ReportError) -> URL {
        let runtime = try recordingRuntime()
        guard let directory = runtime.directory else { throw notRecording }
        _ = try DiagnosticsCapture.capture(runtime, reason: "on-demand")
        let destination = url ?? directory.appendingPathComponent(ReportBuilder.fileName)
        try ReportBuilder(directory: directory, capBytes: runtime.configuration.reportCapBytes).write(to: destination)
        return destination
    }
}
