// LedgerFormat.md against the lines the code writes: every kind, through the functions that make
// the lines (records, crash recovery, the writer's gap report) and the real demo binary.
import Foundation
import PerfCore
import Testing

@testable import Perf

@Suite struct ContractDocsLedgerTests {
    static let session = "0123456789abcdef"
    static let wall: UInt64 = 1_764_680_400_000_000_000

    /// One line per way the facade writes one, from the records the runtime emits and the note
    /// floor's count of what it held back.
    static func recordLines() -> [LedgerEvent] {
        let records: [Record] = [
            .spanEnded(
                SpanEndRecord(
                    id: 1, name: "api.get", key: "secret-key", site: "App/API.swift:88", startWallNanos: wall,
                    durationNanos: 2_000_000_000, budgetNanos: 1_000_000_000, exit: .failure, reason: "HTTPError",
                    detail: "https://user@host/v1/threads?token=x", count: 200,
                    children: [ChildTotal(name: "db.query", count: 3, totalNanos: 1_200_000_000, maxNanos: 900_000_000)]
                )),
            .spanEnded(
                {
                    var parent = SpanEndRecord(
                        id: 0, name: "api.list", site: "App/API.swift:120", startWallNanos: wall,
                        durationNanos: 2_000_000_000, budgetNanos: 1_000_000_000, exit: .success)
                    parent.childrenUncounted = true
                    return parent
                }()),
            .spanEnded(
                {
                    // A sampled child with children of its own.
                    var child = SpanEndRecord(
                        id: 0, name: "db.query", site: "App/Store.swift:40", startWallNanos: wall,
                        durationNanos: 900_000_000, budgetNanos: 50_000_000, exit: .success,
                        children: [ChildTotal(name: "db.row", count: 2, totalNanos: 1_000, maxNanos: 600)])
                    child.scope = 131_073
                    child.parentScope = 65_537
                    child.profile = Self.profile
                    return child
                }()),
            .spanEnded(
                SpanEndRecord(
                    id: 2, name: "boot", site: "App/Main.swift:3", startWallNanos: wall, durationNanos: 5,
                    budgetNanos: nil, exit: .success)),
            .overdue(
                OverdueRecord(
                    id: 3, name: "socket.session", key: "k", site: "App/Socket.swift:9", openForNanos: 9_000_000,
                    budgetNanos: 1_000_000, wallNanos: wall)),
            .unmatchedEnd(UnmatchedEndRecord(key: "k", name: nil, site: "App/Socket.swift:12", wallNanos: wall)),
            .note(NoteRecord(name: "socket.reconnect", detail: "/v1/socket", suppressedCount: 3, wallNanos: wall)),
            .hang(
                HangRecord(
                    kind: .hang, lowerMs: 400, upperMs: 425, stallMs: 12, fatal: false, suppressed: nil,
                    thread: "main (tid 7)", stack: ["App.Feed.parse()", "App.main()"],
                    stuckFrames: ["App.Feed.parse()"], culprit: "App.Feed.parse()", targetName: "main",
                    wallNanos: wall, durationMs: 412.5, stackQuality: "full", wait: "read(fd 7 → pipe 123)",
                    inProgress: true)),
            .hang(
                HangRecord(
                    kind: .hitch, lowerMs: 130, upperMs: 150, stallMs: 0, suppressed: "stopped", thread: "unknown",
                    targetName: "demo.feed", wallNanos: wall)),
            .session(SessionEventRecord(sessionID: session, event: .start, wallNanos: wall)),
            .session(SessionEventRecord(sessionID: session, event: .end, wallNanos: wall)),
        ]
        return records.compactMap { LedgerLines.event(for: $0, session: session) }
            + [NoteFloor.line(.init(name: "socket.reconnect", count: 12), session: session, wallNanos: wall)]
    }

    static let profile = SpanProfile(
        samples: 3, suspended: 1, missed: 1, intervalMs: 10, capped: true,
        top: [
            SpanProfile.Stack(
                count: 2, culprit: "App.Store.load(id:)", wait: "read(fd 7 → socket 127.0.0.1:5432)",
                frames: ["__read", "App.Store.load(id:)"]),
            SpanProfile.Stack(count: 1, culprit: "other", wait: nil, frames: []),
        ],
        open: ["db.row"])

    /// The lines the next start writes about a crashed session and an unreadable one.
    static func recoveryLines() -> [LedgerEvent] {
        var crashed = RecoveredSession(
            id: "fedcba9876543210",
            info: SessionInfo(
                id: "fedcba9876543210", pid: 4242, startWallNanos: wall, app: .init(name: "app", version: "1.0")),
            status: .crashed,
            orphanedSpans: [
                JournalledSpan(
                    id: 9, name: "sync.upload", key: "k", site: "App/Sync.swift:41", budgetNanos: 5_000_000_000,
                    lifetime: "indefinite", startWallNanos: wall)
            ],
            fatalMarkers: [
                OngoingMarker(
                    id: 1, kind: "hang", name: "main", startedWallNanos: wall, lastKnownDurationNanos: 30_000_000_000,
                    payload: [
                        "culprit": "App.Store.compact()", "thread": "main (tid 4242)", "wait": "futex(…)",
                        "stack": "App.Store.compact()\nApp.main()", "stuckFrames": "App.Store.compact()",
                    ])
            ],
            recoveryNote: "no end marker")
        crashed.spanMemory = RecoveredSpanMemory(
            histograms: [:], spans: [], ringCapacity: 0, recorded: 0, clockPair: (1, wall + 5_000_000_000),
            lastAliveWallNanos: wall + 5_000_000_000, tornRecords: 1, damaged: 2, droppedRecords: 3)
        var withoutMemory = crashed
        withoutMemory.id = "fedcba9876543211"
        withoutMemory.spanMemory = nil
        withoutMemory.spanMemoryProblem = "span memory /d/sessions/fedcba9876543211/spans.map: span memory version 2"
        let unreadable = RecoveredSession(id: "0000000000000001", info: nil, status: .unreadable(reason: "bad header"))
        var profiles = ProfileSlots.Recovered(dropped: 2, damaged: 1)
        profiles.open = [
            .init(name: "api.get", startWallNanos: wall, budgetNanos: 1_000_000, tid: 9, profile: profile),
            .init(name: "api.put", startWallNanos: wall, budgetNanos: 1_000_000, tid: 9, profile: nil),
        ]
        return RecoveryLines.events(for: crashed, profiles: profiles) + RecoveryLines.events(for: withoutMemory)
            + RecoveryLines.events(for: unreadable)
    }

    /// The writer's gap report: a line over the cap is dropped, the next one says so.
    static func writerLines() throws -> [JSONValue] {
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let writer = try LedgerWriter(directory: directory, capBytes: 512)
        var huge = LedgerEvent(kind: .note, name: "huge", session: session, timestampMs: 0)
        huge.detail = String(repeating: "x", count: 1024)
        #expect(throws: LedgerError.self) { try writer.append(huge) }
        try writer.append(LedgerEvent(kind: .note, name: "after", session: session, timestampMs: 0))
        // What the ledger queue writes when it had no room for lines.
        writer.appendDropped(3, cause: DropCause.backlog.rawValue, session: session)
        writer.close()
        return try lines(of: directory.appendingPathComponent(LedgerWriter.fileName))
    }

    static func lines(of url: URL) throws -> [JSONValue] {
        try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map { try JSONValue.parse(Array($0.utf8)) }
    }

    static func encoded(_ events: [LedgerEvent]) throws -> [JSONValue] {
        try events.map { event in
            var bytes: [UInt8] = []
            LedgerEncoder.encodeLine(event, into: &bytes)
            return try JSONValue.parse(bytes)
        }
    }

    @Test func theArticleFollowsItsOwnConvention() throws {
        let contract = try LedgerContract()
        #expect(contract.unreadable.isEmpty, "rows whose type or kinds the convention does not define")
        #expect(contract.kinds == Set(LedgerEvent.Kind.known.map(\.rawValue)), "the kinds table is the known kinds")
        #expect(contract.everyLineKeys == ["v", "ts", "session", "kind", "name"])
        #expect(contract.names["session"] == ["start", "end", "crashed", "unreadable"], "closed name lists are read")
        #expect(contract.names["span"] == nil, "a span's name is the program's")
    }

    @Test func everyFixedKeyOfTheEncoderIsDocumented() throws {
        let contract = try LedgerContract()
        for key in LedgerEncoder.FixedKey.allCases.map(\.name) {
            #expect(contract.keys[key] != nil, "`\(key)` is written by the encoder but not in LedgerFormat.md")
        }
    }

    /// A safety net for keys a future code path adds outside the fixed schema: every
    /// `extra["key"]` the Perf module sets is documented.
    @Test func everyExtraKeyTheSourcesSetIsDocumented() throws {
        let contract = try LedgerContract()
        let folder = ContractArticle.sources.appendingPathComponent("Perf")
        let files = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String } ?? []
        var found: Set<String> = []
        for file in files where file.hasSuffix(".swift") {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for piece in text.components(separatedBy: ".extra[\"").dropFirst() {
                if let end = piece.firstIndex(of: "\"") { found.insert(String(piece[..<end])) }
            }
        }
        #expect(found.count >= 10, "the scan finds the extra keys (\(found.sorted()))")
        for key in found.sorted() {
            #expect(contract.keys[key] != nil, "`extra[\"\(key)\"]` is set in Sources/Perf but not in LedgerFormat.md")
        }
    }

    @Test func everyLineTheCodeWritesMatchesTheArticle() throws {
        let contract = try LedgerContract()
        let lines = try Self.encoded(Self.recordLines() + Self.recoveryLines()) + (try Self.writerLines())
        var kinds: Set<String> = []
        var keys: Set<String> = []
        for line in lines {
            let problems = contract.problems(line)
            #expect(problems.isEmpty, "\(problems) in \(line)")
            kinds.insert(line.object?["kind"]?.string ?? "")
            keys.formUnion(line.object?.keys ?? [:].keys)
        }
        #expect(
            kinds == contract.kinds.subtracting(["diagnostic"]), "every kind but `diagnostic` (ContractDocsDemoTests)")
        let onlyDiagnostic: Set<String> = ["path", "droppedSpanRecords", "droppedSpanProfiles"]
        #expect(
            keys == Set(contract.keys.keys).subtracting(onlyDiagnostic), "every documented key is written somewhere")
        #expect(
            !lines.contains { $0.object?["detail"]?.string?.contains("token") == true },
            "the privacy filter ran where the lines are made")
    }
}

/// LedgerFormat.md's Losses table names every loss counter of the runtime's modules, and the
/// `dropped` lines the code writes carry their documented cause.
@Suite struct LossTableTests {
    /// The backticked words of the first column of the Losses table.
    static func tabled() throws -> Set<String> {
        let article = try ContractArticle(module: "Perf", "LedgerFormat")
        var names: Set<String> = []
        for line in article.section("## Losses") where line.hasPrefix("|") {
            let first = line.split(separator: "|", omittingEmptySubsequences: true).first ?? ""
            for piece in first.components(separatedBy: "`").enumerated() where piece.offset % 2 == 1 {
                names.insert(piece.element)
            }
        }
        return names
    }

    /// Every `dropped…`, `omitted…` and `unreported…` property or constant declared in the modules.
    static func counters() throws -> Set<String> {
        let pattern = try NSRegularExpression(pattern: "\\b(?:var|let) ((?:dropped|omitted|unreported)[A-Za-z]*)\\b")
        var found: Set<String> = []
        for module in ["Perf", "PerfCore", "JournalKit"] {
            let folder = ContractArticle.sources.appendingPathComponent(module)
            let files = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String } ?? []
            for file in files where file.hasSuffix(".swift") {
                let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                let range = NSRange(text.startIndex..., in: text)
                for match in pattern.matches(in: text, range: range) {
                    if let name = Range(match.range(at: 1), in: text) { found.insert(String(text[name])) }
                }
            }
        }
        return found
    }

    @Test func everyLossCounterInTheCodeIsInTheTable() throws {
        let counters = try Self.counters()
        #expect(counters.count >= 10, "the scan finds the counters (\(counters.sorted()))")
        let missing = counters.subtracting(try Self.tabled())
        #expect(missing.isEmpty, "loss counters missing from LedgerFormat.md's Losses table: \(missing.sorted())")
    }

    @Test func everyDropCauseAndTheWritersCauseAreDocumented() throws {
        let article = try ContractArticle(module: "Perf", "LedgerFormat")
        let causeRow = try #require(article.table(under: "## Keys").first { $0.key == "cause" })
        for cause in DropCause.allCases.map(\.rawValue) where cause != DropCause.queue.rawValue {
            #expect(causeRow.cells.joined().contains("`\(cause)`"), "cause \(cause)")
        }
        #expect(causeRow.cells.joined().contains("`\(LedgerWriter.writeCause)`"))
    }
}
