// performance-report.json as one typed value: what `ReportBuilder` writes and what every
// reader (summary, budgets, compare, the exporters) reads, through one decoder.
import Foundation
import Perf
import PerfCore

/// A performance report: the typed form of `performance-report.json` (schema `perf-report`).
///
/// `ReportBuilder` writes the file with its own deterministic writer (sorted keys, one
/// spelling per number); this is how it is read back. Unknown keys are ignored, an absent section
/// reads as empty, a newer schema major version is rejected, and (reading ``Reading/strict``) a
/// value of the wrong type is an error naming its key path.
///
/// ```swift
/// let report = try PerformanceReport(contentsOf: URL(fileURLWithPath: "performance-report.json"))
/// for (name, span) in report.spans { print(name, span.p95Ms) }
/// ```
public struct PerformanceReport: Codable, Sendable, Equatable {
    /// The `schema` of every report (``ReportBuilder/schema``).
    public static let schema = ReportBuilder.schema
    /// The major version this build writes and reads; a newer one is rejected
    /// (``ReportBuilder/schemaVersion``).
    public static let schemaVersion = ReportBuilder.schemaVersion
    /// The report's conventional file name (``ReportBuilder/fileName``).
    public static let fileName = ReportBuilder.fileName
    /// The `generator` of reports this build writes (``ReportBuilder/generator``).
    public static let generator = ReportBuilder.generator
    /// The largest report file a reader opens.
    package static let maximumFileBytes = 64 << 20

    /// Always ``schema``.
    public var schema: String
    /// The major version it was written with (at most ``schemaVersion``).
    public var schemaVersion: Int
    /// The time of the newest record the report was built from.
    public var generatedAt: Timestamp?
    /// What wrote it.
    public var generator: String?
    /// The instrumented program, from the newest snapshot (or the newest crashed-session line).
    public var app: App?
    /// The machine of the newest snapshot.
    public var host: Host?
    /// Sessions, newest first.
    public var sessions: [Session]
    /// The most sessions (processes) live at one moment, from their start-to-end intervals (an
    /// active session counts until ``generatedAt``); `nil` in a report from an older build.
    public var maxConcurrentSessions: Int64?
    /// Per-span-name statistics.
    public var spans: [String: Span]
    /// Hang totals, culprits and per-target histograms.
    public var hangs: Hangs
    /// The newest ledger lines and the ledger's counters.
    public var ledger: Ledger
    /// Diagnostic snapshots' process figures, newest first.
    public var diagnostics: [Diagnostic]
    /// Each session's flight-recorder spans from its newest snapshot.
    public var intervals: [Intervals]
    /// What the builder read.
    public var input: Input?
    /// What the size cap left out; `nil` when nothing was.
    public var truncated: Truncated?
    /// What a ``Reading/lenient`` reading left out; always empty after a strict one. Not part
    /// of the file.
    public var problems: [Problem] = []

    /// A report of this build's schema, assembled in code.
    public init(
        generatedAt: Timestamp? = nil, generator: String? = PerformanceReport.generator, app: App? = nil,
        host: Host? = nil, sessions: [Session] = [], spans: [String: Span] = [:],
        hangs: Hangs = Hangs(), ledger: Ledger = Ledger(), diagnostics: [Diagnostic] = [],
        intervals: [Intervals] = [], input: Input? = nil, truncated: Truncated? = nil,
        maxConcurrentSessions: Int64? = nil
    ) {
        self.schema = Self.schema
        self.schemaVersion = Self.schemaVersion
        self.generatedAt = generatedAt
        self.generator = generator
        self.app = app
        self.host = host
        self.sessions = sessions
        self.maxConcurrentSessions = maxConcurrentSessions
        self.spans = spans
        self.hangs = hangs
        self.ledger = ledger
        self.diagnostics = diagnostics
        self.intervals = intervals
        self.input = input
        self.truncated = truncated
    }

    /// Reads the report at `url`.
    ///
    /// - Throws: ``Perf/ReportError`` naming the file: unreadable, larger than 64 MiB, or as
    ///   ``init(bytes:path:reading:)``.
    public init(contentsOf url: URL, reading: Reading = .strict) throws(Perf.ReportError) {
        let bytes = try ReportFile.read(url.path, limit: Self.maximumFileBytes).get()
        try self.init(bytes: bytes, path: url.path, reading: reading)
    }

    /// Reads report bytes; `path` is used in messages.
    ///
    /// - Throws: ``Perf/ReportError`` with code `invalidReport` and the problem (`the file is
    ///   empty`, `not valid JSON (truncated or corrupt)`, `not valid JSON (line 3, column 12: a
    ///   trailing comma before '}', which JSON does not allow; remove it)`, `a Perf ledger (…), not a performance
    ///   report; build the report from its data directory: perf-report build --dir <dir>` for a
    ///   ledger, `not a performance report (…)`, `missing or invalid "schemaVersion"`, `"spans"
    ///   is missing or has the wrong type`, and, reading strictly, a value of the wrong type:
    ///   `"spans.db.get.count": expected a number`), or code `newerSchema` for a newer major
    ///   version.
    public init(bytes: [UInt8], path: String, reading: Reading = .strict) throws(Perf.ReportError) {
        guard !bytes.isEmpty else { throw Perf.ReportError(.invalidReport, path: path, "the file is empty") }
        // JSON as every reader of the package reads it (RFC 8259, strictly): JSONDecoder, which
        // reads the report next, lets a trailing comma through and leaves members it skips
        // unchecked, where JSONSerialization and every other JSON tool refuse the file.
        do {
            _ = try JSONScanner(bytes)
        } catch {
            throw Perf.ReportError(.invalidReport, path: path, Self.notJSON(bytes, path: path, error))
        }
        let context = ReportDecodingContext(reading: reading)
        do {
            self = try context.decoder().decode(PerformanceReport.self, from: Data(bytes))
        } catch let error as ReportDocumentError {
            // One ledger line is a JSON object: "missing schema" would not say what the file is.
            if error.code == .invalidReport, let ledger = LedgerLookalike.problem(bytes, path: path) {
                throw Perf.ReportError(.invalidReport, path: path, ledger)
            }
            throw Perf.ReportError(error.code, path: path, error.message)
        } catch let error as ReportDecodingError {
            throw Perf.ReportError(.invalidReport, path: path, error.problem.description)
        } catch {
            // The decoder scans the whole input before the first init(from:) runs.
            guard context.started else {
                let problem = LedgerLookalike.problem(bytes, path: path) ?? "not valid JSON (truncated or corrupt)"
                throw Perf.ReportError(.invalidReport, path: path, problem)
            }
            let problem = ReportDecodingError(error, at: [], expecting: PerformanceReport.self).problem
            throw Perf.ReportError(.invalidReport, path: path, problem.description)
        }
        problems = context.problems.map(Problem.init)
    }

    enum CodingKeys: String, CodingKey {
        case schema, schemaVersion, generatedAt, generator, app, host, sessions, spans, hangs, ledger, diagnostics
        case intervals, input, truncated, maxConcurrentSessions
    }

    /// Reads a report: the document checks first (an object, the schema, a version this build
    /// reads, `spans` and `sessions` present), then every section.
    public init(from decoder: any Decoder) throws {
        let context = decoder.reportContext
        context?.started = true
        guard let container = try? decoder.container(keyedBy: CodingKeys.self) else {
            throw ReportDocumentError("not a performance report (not a JSON object)")
        }
        guard container.contains(.schema) else {
            throw ReportDocumentError("not a performance report (missing \"schema\")")
        }
        guard let schema = try? container.decode(String.self, forKey: .schema), schema == Self.schema else {
            throw ReportDocumentError("not a performance report (schema is not \"\(Self.schema)\")")
        }
        guard let version = try? container.decode(Double.self, forKey: .schemaVersion), version.isFinite,
            version == version.rounded(), version >= 1
        else {
            throw ReportDocumentError("missing or invalid \"schemaVersion\"")
        }
        guard version <= Double(Self.schemaVersion) else {
            throw ReportDocumentError(
                .newerSchema,
                "schemaVersion \(Int64(min(version, 1e15))) is newer than this perf-report reads "
                    + "(\(Self.schemaVersion)); use a newer perf-report")
        }
        guard (try? container.nestedContainer(keyedBy: ReportKey.self, forKey: .spans)) != nil else {
            throw ReportDocumentError("\"spans\" is missing or has the wrong type")
        }
        guard (try? container.nestedUnkeyedContainer(forKey: .sessions)) != nil else {
            throw ReportDocumentError("\"sessions\" is missing or has the wrong type")
        }
        self.schema = schema
        schemaVersion = Int(version)
        generatedAt = try container.optional(.generatedAt, context)
        generator = try container.optional(.generator, context)
        app = try container.optional(.app, context, as: DecodedApp.self)?.app
        host = try container.optional(.host, context, as: DecodedHost.self)?.host
        sessions = try container.list(.sessions, context)
        maxConcurrentSessions = try container.optional(.maxConcurrentSessions, context)
        spans = try container.map(.spans, context)
        hangs = try container.optional(.hangs, context) ?? Hangs()
        ledger = try container.optional(.ledger, context) ?? Ledger()
        diagnostics = try container.list(.diagnostics, context)
        intervals = try container.list(.intervals, context)
        input = try container.optional(.input, context)
        truncated = try container.optional(.truncated, context)
    }
}
