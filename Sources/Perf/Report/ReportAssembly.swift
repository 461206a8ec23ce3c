// Puts the sections together under the size cap: fixed parts first (with how many sessions were
// live at once), then sessions, spans, the newest diagnostic, ledger events newest first, older
// diagnostics, each while it fits.
import PerfCore

/// The diagnostic payloads of a directory, parsed on demand (most are never needed once the cap
/// is reached) and remembered.
struct PayloadSet {
    let folder: String
    /// Payload names, newest first.
    let newestFirst: [String]
    private var parsed: [String: DiagnosticSnapshot?] = [:]
    private var parsedLight: [String: DiagnosticSnapshot?] = [:]
    private(set) var invalid = 0

    init(folder: String, names: [String]) {
        self.folder = folder
        self.newestFirst = names.reversed()
    }

    /// The snapshot in `name`, or `nil` when the file is unreadable, too large or not a payload.
    /// Without `histograms` its `spans` and `hangs` are empty (decoding them is most of the cost).
    mutating func snapshot(_ name: String, histograms: Bool = true) -> DiagnosticSnapshot? {
        if let known = parsed[name] { return known }
        if !histograms, let known = parsedLight[name] { return known }
        var snapshot: DiagnosticSnapshot?
        if case .success(let bytes) = ReportFile.read(folder + "/" + name, limit: ReportLimits.maximumPayloadBytes) {
            snapshot = try? DiagnosticSnapshot(jsonBytes: bytes, histograms: histograms)
        }
        // A file is counted invalid once, whichever way it was first read.
        if snapshot == nil, parsed[name] == nil, parsedLight[name] == nil { invalid += 1 }
        if histograms { parsed[name] = snapshot } else { parsedLight[name] = snapshot }
        return snapshot
    }

    /// Each session's newest valid snapshot, newest first. The session part of a name stands
    /// for the session, so older payloads of a session already covered are never opened.
    mutating func newestPerSession() -> [(name: String, snapshot: DiagnosticSnapshot)] {
        var covered: Set<Substring> = []
        var result: [(String, DiagnosticSnapshot)] = []
        for name in newestFirst {
            let session = name.dropFirst(20).dropLast(5)
            guard !covered.contains(session), let snapshot = snapshot(name) else { continue }
            covered.insert(session)
            result.append((name, snapshot))
        }
        return result
    }
}

/// The report under the cap.
struct ReportAssembly {
    let capBytes: Int
    let digest: LedgerDigest
    var payloads: PayloadSet
    /// The session index's records (`sessions/*.session.json`), which outlive the ledger's lines.
    var index: [SessionIndexRecord] = []

    mutating func bytes() -> [UInt8] {
        let newest = payloads.newestPerSession()
        var hangHistograms: [String: LatencyHistogram] = [:]
        var payloadSessions: [String: Int64] = [:]
        for (_, snapshot) in newest {
            for (name, histogram) in snapshot.hangs {
                hangHistograms[name, default: LatencyHistogram()].merge(histogram)
            }
            payloadSessions[snapshot.session] = min(payloadSessions[snapshot.session] ?? .max, snapshot.takenAtMs)
        }
        let latest = newest.first?.snapshot
        let generatedMs = max(
            digest.newestMs ?? 0, newest.map(\.snapshot.takenAtMs).max() ?? 0, ReportSessions.newestMs(index) ?? 0)
        let knownSessions = ReportSessions(digest: digest, payloadSessions: payloadSessions, index: index)
        var fixed: [String: ReportJSON] = [
            "schema": .string(ReportBuilder.schema),
            "schemaVersion": .int(Int64(ReportBuilder.schemaVersion)),
            "generatedAt": .string(LedgerTimestamp.string(ms: generatedMs)),
            "generator": .string(ReportBuilder.generator),
            "app": latest.map { DiagnosticSnapshot.json($0.app) } ?? appFromLedger(),
            "host": latest?.host.json ?? .null,
            "hangs": ReportSections.hangs(digest, targets: hangHistograms),
            "maxConcurrentSessions": .int(Int64(knownSessions.maxConcurrent(reportMs: generatedMs))),
        ]
        var budget = capBytes - ReportLimits.reserveBytes - size(of: fixed)
        // The keys and brackets of the variable members and the ledger's counters.
        let ledgerCounters: [String: ReportJSON] = [
            "malformedLines": .int(Int64(digest.summary.malformedLines)),
            "tornTail": .int(Int64(digest.summary.tornTail)),
            "unknownKinds": .int(Int64(digest.summary.unknownKinds)),
        ]
        budget -= size(of: ledgerCounters) + 96

        var omitted = Omitted()
        var sessions: [ReportJSON] = []
        let allSessions = knownSessions.json()
        for (index, session) in allSessions.enumerated() {
            let cost = session.json.bytes.count + 1
            guard cost <= budget else {
                omitted.sessions = allSessions.count - index
                break
            }
            budget -= cost
            sessions.append(session.json)
        }
        omitted.sessions += digest.omittedSessions

        var spans: [String: ReportJSON] = [:]
        let allSpans = ReportSections.spans(snapshots: Self.spanSnapshots(newest), ledger: digest.spans)
            .sorted { $0.count != $1.count ? $0.count > $1.count : $0.name < $1.name }
        for span in allSpans {
            let cost = ReportJSON.string(span.name).bytes.count + span.json.bytes.count + 2
            if cost <= budget {
                budget -= cost
                spans[span.name] = span.json
            } else {
                omitted.spans += 1
            }
        }
        omitted.spans += digest.omittedSpanNames

        var diagnostics: [ReportJSON] = []
        var diagnosticIndex = 0
        func takeDiagnostics(upTo limit: Int) {
            while diagnosticIndex < min(limit, payloads.newestFirst.count) {
                let name = payloads.newestFirst[diagnosticIndex]
                guard let snapshot = payloads.snapshot(name, histograms: false) else {
                    diagnosticIndex += 1
                    continue
                }
                let entry = ReportSections.diagnostic(snapshot, file: name)
                let cost = entry.bytes.count + 1
                guard cost <= budget else { return }
                budget -= cost
                diagnostics.append(entry)
                diagnosticIndex += 1
            }
        }
        takeDiagnostics(upTo: 1)

        var events: [ReportJSON] = []
        let kept = digest.keptLines
        var firstKept = kept.endIndex
        for index in kept.indices.reversed() {
            let cost = kept[index].count + 1
            guard cost <= budget else { break }
            budget -= cost
            firstKept = index
        }
        for index in firstKept..<kept.endIndex { events.append(.raw(kept[index])) }
        omitted.ledgerEvents = digest.droppedOldest + (firstKept - kept.startIndex)

        let intervals = intervalBlocks(newest, budget: &budget, omitted: &omitted)
        takeDiagnostics(upTo: diagnosticIndex == 0 ? 0 : payloads.newestFirst.count)
        omitted.diagnostics = payloads.newestFirst.count - diagnosticIndex

        var ledger = ledgerCounters
        ledger["events"] = .array(events)
        fixed["ledger"] = .object(ledger)
        fixed["sessions"] = .array(sessions)
        fixed["spans"] = .object(spans)
        fixed["diagnostics"] = .array(diagnostics)
        fixed["intervals"] = .array(intervals)
        fixed["input"] = .object([
            "ledgerEvents": .int(Int64(digest.summary.events)),
            "diagnosticPayloads": .int(Int64(payloads.newestFirst.count)),
            "invalidPayloads": .int(Int64(payloads.invalid)),
            "droppedLines": .object(digest.droppedLines.mapValues(ReportJSON.int)),
            "droppedSpanRecords": .int(digest.droppedSpanRecords.values.reduce(0, &+)),
            "droppedSpanProfiles": .int(digest.droppedSpanProfiles.values.reduce(0, &+)),
        ])
        fixed["truncated"] = omitted.json(capBytes: capBytes)
        var out = ReportJSON.object(fixed).bytes
        out.append(UInt8(ascii: "\n"))
        return out.count <= capBytes ? out : minimal(generatedMs: generatedMs)
    }

    /// The snapshots whose span histograms count: the newest per session id, the one
    /// ``SnapshotCover/covers(_:)`` split that session's ledger lines by.
    static func spanSnapshots(_ newest: [(name: String, snapshot: DiagnosticSnapshot)]) -> [DiagnosticSnapshot] {
        var taken: Set<String> = []
        return newest.compactMap { taken.insert($0.snapshot.session).inserted ? $0.snapshot : nil }
    }

    /// Each session's flight-recorder block from its newest snapshot, newest session first; a
    /// block that does not fit whole keeps its newest spans.
    private func intervalBlocks(
        _ newest: [(name: String, snapshot: DiagnosticSnapshot)], budget: inout Int, omitted: inout Omitted
    ) -> [ReportJSON] {
        var blocks: [ReportJSON] = []
        for (_, snapshot) in newest {
            guard let intervals = snapshot.intervals, !intervals.spans.isEmpty else { continue }
            // Serialised once: the bytes both size the cap and go into the report.
            let spans = intervals.spans.map { ReportJSON.raw(SpanIntervals.json($0).bytes) }
            let header =
                intervals.json(session: snapshot.session, takenAtMs: snapshot.takenAtMs, spans: [])
                .bytes.count + 1
            guard header < budget else {
                omitted.intervals += spans.count
                continue
            }
            var remaining = budget - header
            var first = spans.endIndex
            for index in spans.indices.reversed() {
                let cost = spans[index].bytes.count + 1
                guard cost <= remaining else { break }
                remaining -= cost
                first = index
            }
            omitted.intervals += first
            budget = remaining
            blocks.append(
                intervals.json(session: snapshot.session, takenAtMs: snapshot.takenAtMs, spans: Array(spans[first...])))
        }
        return blocks
    }

    /// The fallback when even the fixed sections (app, host, hangs) exceed the cap, which only a
    /// fabricated input or a tiny cap produces: the header and `truncated`, so the cap still holds.
    private func minimal(generatedMs: Int64) -> [UInt8] {
        var out = ReportJSON.object([
            "schema": .string(ReportBuilder.schema),
            "schemaVersion": .int(Int64(ReportBuilder.schemaVersion)),
            "generatedAt": .string(LedgerTimestamp.string(ms: generatedMs)),
            "generator": .string(ReportBuilder.generator), "app": .null, "host": .null,
            "sessions": .array([]), "spans": .object([:]), "diagnostics": .array([]), "intervals": .array([]),
            "ledger": .object(["events": .array([])]),
            "truncated": .object([
                "capBytes": .int(Int64(capBytes)),
                "reason": .string("app, host and hangs alone exceed the cap; everything was left out"),
            ]),
        ]).bytes
        out.append(UInt8(ascii: "\n"))
        return out
    }

    /// The app named by the newest crashed-session line, when no snapshot names it.
    private func appFromLedger() -> ReportJSON {
        let named = digest.sessions.values.filter { $0.app != nil }
            .max { ($0.startedAtMs ?? $0.firstSeenMs, $0.id) < ($1.startedAtMs ?? $1.firstSeenMs, $1.id) }
        guard let session = named, let app = session.app else { return .null }
        return .object(["name": .string(app), "version": .optional(session.version), "build": .null])
    }

    private func size(of members: [String: ReportJSON]) -> Int {
        members.reduce(0) { $0 + ReportJSON.string($1.key).bytes.count + 2 + $1.value.bytes.count }
    }

    /// What the cap left out.
    struct Omitted {
        var sessions = 0
        var spans = 0
        var ledgerEvents = 0
        var diagnostics = 0
        var intervals = 0

        func json(capBytes: Int) -> ReportJSON {
            guard sessions + spans + ledgerEvents + diagnostics + intervals > 0 else { return .null }
            return .object([
                "capBytes": .int(Int64(capBytes)), "sessionsOmitted": .int(Int64(sessions)),
                "spansOmitted": .int(Int64(spans)), "ledgerEventsOmitted": .int(Int64(ledgerEvents)),
                "diagnosticsOmitted": .int(Int64(diagnostics)), "intervalsOmitted": .int(Int64(intervals)),
                "reason": .string("the report is capped at \(capBytes) bytes; the oldest entries were left out"),
            ])
        }
    }
}
