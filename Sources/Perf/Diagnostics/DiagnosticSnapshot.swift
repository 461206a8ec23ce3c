// One diagnostic snapshot: the process figures and the in-memory histograms at one moment, as
// the JSON payload filed under perf-diagnostics/.
import Foundation
import PerfCore

/// A snapshot of the process and of its span and hang histograms.
///
/// Written as `perf-diagnostics/<ts>-<session>.json` (schema `perf-diagnostics`, version 1,
/// keys sorted), each with a `diagnostic` ledger line pointing at it. The report builder takes
/// each session's newest snapshot for its histograms and lists the process figures.
package struct DiagnosticSnapshot: Sendable, Equatable {
    /// The schema name in every payload.
    package static let schema = "perf-diagnostics"
    /// The major version this build writes and reads.
    package static let schemaVersion = 1

    /// The session that took the snapshot.
    package var session: String
    /// Wall time of the snapshot, milliseconds since the Unix epoch.
    package var takenAtMs: Int64
    /// Why it was taken: `on-demand`, `periodic` or `shutdown`.
    package var reason: String
    /// The instrumented program.
    package var app: Perf.AppInfo
    /// The machine, as the process saw it.
    package var host: HostDescription
    /// Process figures.
    package var process: ProcessFigures
    /// Per-span-name latency histograms of the process so far.
    package var spans: [String: Perf.Histogram]
    /// Per-watchdog-target hang and hitch histograms (suppressed episodes excluded).
    package var hangs: [String: Perf.Histogram]
    /// The flight recorder's most recent spans, when the process keeps them.
    package var intervals: SpanIntervals?
    /// Where each span name's first span in the session began (`Module/File.swift:88`), by name:
    /// the call sites of spans that never went over budget, which write no ledger line.
    package var spanSites: [String: [String]]
    /// Each span name's over-budget and exit counts from span memory: exact whatever the ledger
    /// kept. Names that never went over budget nor exited other than `success` are absent; nil for
    /// a payload written before the counts existed (a reader then counts ledger lines instead).
    package var spanTallies: [String: SpanTally]?

    /// Creates a snapshot.
    package init(
        session: String, takenAtMs: Int64, reason: String, app: Perf.AppInfo, host: HostDescription,
        process: ProcessFigures, spans: [String: Perf.Histogram], hangs: [String: Perf.Histogram],
        intervals: SpanIntervals? = nil, spanSites: [String: [String]] = [:], spanTallies: [String: SpanTally]? = nil
    ) {
        self.spanTallies = spanTallies
        self.intervals = intervals
        self.spanSites = spanSites
        self.session = session
        self.takenAtMs = takenAtMs
        self.reason = reason
        self.app = app
        self.host = host
        self.process = process
        self.spans = spans
        self.hangs = hangs
    }

    /// The payload bytes, keys sorted.
    package var jsonBytes: [UInt8] {
        var out: [UInt8] = []
        var members: [String: ReportJSON] = [
            "schema": .string(Self.schema), "schemaVersion": .int(Int64(Self.schemaVersion)),
            "session": .string(session), "takenAt": .string(LedgerTimestamp.string(ms: takenAtMs)),
            "takenAtMs": .int(takenAtMs), "reason": .string(reason), "app": Self.json(app), "host": host.json,
            "process": process.json,
            "spans": .object(spans.mapValues { .raw(Array($0.jsonString.utf8)) }),
            "hangs": .object(hangs.mapValues { .raw(Array($0.jsonString.utf8)) }),
        ]
        if !spanSites.isEmpty {
            members["spanSites"] = .object(spanSites.mapValues { .array($0.map(ReportJSON.string)) })
        }
        if let spanTallies { members["spanTallies"] = .object(spanTallies.mapValues(Self.json)) }
        if let intervals {
            members["intervals"] = intervals.json(
                session: session, takenAtMs: takenAtMs, spans: intervals.spans.map(SpanIntervals.json))
        }
        ReportJSON.object(members).write(into: &out)
        out.append(UInt8(ascii: "\n"))
        return out
    }

    /// Parses a payload.
    ///
    /// - Throws: A message naming the problem: not JSON, another schema, a newer major
    ///   version, a missing or mistyped field, an invalid histogram.
    package init(jsonBytes: [UInt8]) throws(Perf.ReportError) {
        try self.init(jsonBytes: jsonBytes, histograms: true)
    }

    /// Parses a payload; without `histograms`, `spans`, `hangs` and `intervals` are left
    /// empty and not decoded (most of the cost), for readers that only list process figures.
    ///
    /// Decoded through ``LazyJSONDecoder``, which parses only what `init(from:)` reads: a
    /// report build reads every payload, most of them only for their process figures.
    init(jsonBytes: [UInt8], histograms: Bool) throws(Perf.ReportError) {
        let context = ReportDecodingContext(lenient: false, skipsHistograms: !histograms)
        do {
            self = try context.lazyDecoder().decode(DiagnosticSnapshot.self, from: jsonBytes)
        } catch let error as ReportDocumentError {
            throw Perf.ReportError(error.code, path: "", error.message)
        } catch let error as ReportDecodingError {
            throw Perf.ReportError(.invalidReport, path: "", "not a valid diagnostic payload: \(error.problem)")
        } catch {
            guard context.started else {
                throw Perf.ReportError(.invalidReport, path: "", "not a valid diagnostic payload (not JSON)")
            }
            let problem = ReportDecodingError(error, at: [], expecting: DiagnosticSnapshot.self).problem
            throw Perf.ReportError(.invalidReport, path: "", "not a valid diagnostic payload: \(problem)")
        }
    }

    static func json(_ tally: SpanTally) -> ReportJSON {
        .object([
            "overBudget": .int(Int64(clamping: tally.overBudget)),
            "overBudgetNs": .int(Int64(clamping: tally.overBudgetNanos)),
            "failure": .int(Int64(clamping: tally.failure)),
            "cancelled": .int(Int64(clamping: tally.cancelled)), "superseded": .int(Int64(clamping: tally.superseded)),
            "expired": .int(Int64(clamping: tally.expired)),
        ])
    }

    static func json(_ app: Perf.AppInfo) -> ReportJSON {
        .object(["name": .string(app.name), "version": .string(app.version), "build": .string(app.build)])
    }
}

/// The machine a snapshot was taken on, with the toolchain and build configuration.
public typealias HostDescription = SessionInfo.Host

extension SessionInfo.Host {
    var json: ReportJSON {
        .object([
            "os": .string(os), "kernel": .string(kernel), "arch": .string(arch), "cpuModel": .string(cpuModel),
            "cores": .int(Int64(cores)), "memoryBytes": .int(Int64(clamping: memoryBytes)),
            "swiftVersion": .string(swiftVersion), "buildConfiguration": .string(buildConfiguration),
        ])
    }
}

extension DiagnosticSnapshot: Decodable {
    enum CodingKeys: String, CodingKey {
        case schema, schemaVersion, session, takenAtMs, reason, app, host, process, spans, hangs, intervals
        case spanSites, spanTallies
    }

    /// One name's tally as a payload holds it; a missing count reads as 0.
    struct DecodedTally: Decodable {
        let tally: SpanTally
        enum CodingKeys: String, CodingKey { case overBudget, overBudgetNs, failure, cancelled, superseded, expired }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            func count(_ key: CodingKeys) throws -> UInt64 {
                try container.decodeIfPresent(UInt64.self, forKey: key) ?? 0
            }
            tally = SpanTally(
                overBudget: try count(.overBudget), overBudgetNanos: try count(.overBudgetNs),
                failure: try count(.failure),
                cancelled: try count(.cancelled), superseded: try count(.superseded), expired: try count(.expired))
        }
    }

    /// Reads a payload: another schema or a newer major version is rejected, every member but
    /// `intervals`, `spanSites` and `spanTallies` is required and strictly typed. A damaged
    /// `intervals`, `spanSites` or `spanTallies` block costs only itself (it reads as absent):
    /// older payloads have none of them.
    package init(from decoder: any Decoder) throws {
        let context = decoder.reportContext
        context?.started = true
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let schema: String = try container.required(.schema)
        guard schema == Self.schema else {
            throw ReportDocumentError("not a diagnostic payload (schema \"\(schema)\")")
        }
        let version: Int = try container.required(.schemaVersion)
        guard version <= Self.schemaVersion else {
            throw ReportDocumentError(
                .newerSchema, "schemaVersion \(version) is newer than this build reads (\(Self.schemaVersion))")
        }
        session = try container.required(.session)
        takenAtMs = try container.required(.takenAtMs)
        reason = try container.required(.reason)
        app = try container.required(.app)
        host = try container.required(.host)
        process = try container.required(.process)
        if context?.skipsHistograms == true {
            spans = [:]
            hangs = [:]
            intervals = nil
            spanSites = [:]
            spanTallies = nil
        } else {
            spans = try container.required(.spans, as: [String: DecodedHistogram].self).mapValues(\.histogram)
            hangs = try container.required(.hangs, as: [String: DecodedHistogram].self).mapValues(\.histogram)
            intervals = try? container.decodeIfPresent(SpanIntervals.self, forKey: .intervals)
            spanSites = (try? container.decodeIfPresent([String: [String]].self, forKey: .spanSites)) ?? [:]
            spanTallies = (try? container.decodeIfPresent([String: DecodedTally].self, forKey: .spanTallies))?
                .mapValues(\.tally)
        }
    }
}
