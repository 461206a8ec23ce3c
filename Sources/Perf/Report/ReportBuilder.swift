// Builds performance-report.json from a data directory: read-only, deterministic, capped.
import Foundation
import Glibc
import PerfCore

/// Builds `performance-report.json` from a data directory: its ledger, its diagnostic payloads
/// and its session index (`sessions/<id>.session.json`).
///
/// Building only reads: it never creates, renames or deletes anything in the directory, so it
/// works on a copy taken from a machine whose process is still writing (a torn last line is
/// counted, a payload being written is still under its temporary name and ignored).
///
/// The same directory always gives the same bytes: keys are sorted, every list has a fixed
/// order, numbers have one spelling, and `generatedAt` is the time of the newest record in the
/// directory rather than the clock of the machine building the report.
///
/// The output never exceeds ``capBytes``. What does not fit is left out in this order (first
/// dropped last): older diagnostics, older ledger events, the newest diagnostic, spans with
/// the fewest calls, the oldest sessions; `truncated` counts each.
///
/// ```swift
/// let bytes = try ReportBuilder(directory: dataDirectory).build()
/// ```
///
/// PerfReport's `PerformanceReport` reads the file back; a contract test proves that every key
/// written is one that model knows.
public struct ReportBuilder: Sendable {
    /// The `schema` of every report.
    public static let schema = "perf-report"
    /// The major version this build writes; readers reject newer ones.
    public static let schemaVersion = 1
    /// The report's conventional file name.
    public static let fileName = "performance-report.json"
    /// The `generator` of reports this build writes.
    public static let generator = "perf-report (Perf report schema \(schemaVersion))"

    /// The data directory read.
    public let directory: URL
    /// The largest report, in bytes.
    public let capBytes: Int

    /// A builder of `directory`'s report.
    ///
    /// - Parameters:
    ///   - directory: A Perf data directory (or a copy of one).
    ///   - capBytes: The report's size cap; default 2 MiB, at least 4 KiB.
    public init(directory: URL, capBytes: Int = 2 * 1024 * 1024) {
        self.directory = directory
        self.capBytes = max(capBytes, 4 * 1024)
    }

    /// Reads the directory and returns the report's bytes (ending in a newline).
    ///
    /// - Parameter progress: Called with one line per phase when the input is large (more
    ///   than 8 MiB), for a command line to show on stderr.
    /// - Throws: ``ReportError`` naming the directory or file: missing, unreadable, empty, or
    ///   a ledger with no valid line.
    public func build(progress: (String) -> Void = { _ in }) throws(Perf.ReportError) -> [UInt8] {
        let path = directory.path
        try Self.checkDirectory(path)
        let payloadNames = try DiagnosticFiles.list(folder: path + "/" + DiagnosticFiles.directoryName)
        let ledgerBytes =
            Self.fileSize(path + "/" + LedgerWriter.fileName)
            + Self.fileSize(path + "/" + LedgerWriter.previousFileName)
        // Each session's start, end and status, kept when its ledger lines rotated away.
        let index = SessionIndex(dataDirectory: directory).records()
        if ledgerBytes == 0, payloadNames.isEmpty, index.isEmpty, !Self.ledgerExists(path) {
            throw Perf.ReportError(
                .emptyDirectory, path: path,
                "no \(LedgerWriter.fileName) and no diagnostic payloads; is this a Perf data directory?")
        }
        let large = ledgerBytes > 8 << 20
        // The payloads first: each session's newest snapshot decides which of its span lines
        // are already calls of its histograms and which add to them.
        if large { progress("reading \(payloadNames.count) diagnostic payloads…") }
        var payloads = PayloadSet(folder: path + "/" + DiagnosticFiles.directoryName, names: payloadNames)
        let covers = SnapshotCover.covers(payloads.newestPerSession())
        if large { progress("reading ledger (\(ledgerBytes >> 20) MiB)…") }
        let digest = try LedgerDigest.read(directory: path, keepBytes: capBytes, covers: covers)
        if digest.summary.events == 0, digest.summary.malformedLines > 0 {
            throw Perf.ReportError(
                .invalidLedger, path: path + "/" + LedgerWriter.fileName,
                "not a Perf ledger: none of its \(digest.summary.malformedLines) lines is a ledger event")
        }
        if large { progress("assembling the report…") }
        var assembly = ReportAssembly(capBytes: capBytes, digest: digest, payloads: payloads, index: index)
        return assembly.bytes()
    }

    /// Builds the report and writes it to `url` (temporary file, then rename).
    public func write(to url: URL, progress: (String) -> Void = { _ in }) throws(Perf.ReportError) {
        try ReportFile.write(try build(progress: progress), to: url.path)
    }

    static func checkDirectory(_ path: String) throws(Perf.ReportError) {
        switch FileSyscalls.live.status(path) {
        case .failure(let error) where error.errno == ENOENT:
            throw Perf.ReportError(.missingDirectory, path: path, "no such directory")
        case .failure(let error):
            throw Perf.ReportError(.unreadable, path: path, Perf.ReportError.describe(errno: error.errno))
        case .success(let info) where !info.isDirectory:
            throw Perf.ReportError(.missingDirectory, path: path, "not a directory")
        case .success:
            if case .failure(let error) = FileSyscalls.live.listDirectory(path) {
                throw Perf.ReportError(.unreadable, path: path, Perf.ReportError.describe(errno: error.errno))
            }
        }
    }

    static func fileSize(_ path: String) -> Int {
        (try? FileSyscalls.live.status(path).get().size) ?? 0
    }

    static func ledgerExists(_ path: String) -> Bool {
        FileSyscalls.live.isAccessible(path + "/" + LedgerWriter.fileName, F_OK)
            || FileSyscalls.live.isAccessible(path + "/" + LedgerWriter.previousFileName, F_OK)
    }
}
