// One streaming pass over the ledger: everything the report needs from it, in bounded memory
// whatever the size of the files (the newest lines up to the report cap, span aggregates per name
// and session, split by what each session's newest snapshot already holds).
import Foundation
import PerfCore

/// What the report builder learns from `perf-events.jsonl.prev` and `perf-events.jsonl`.
struct LedgerDigest {
    /// What the ledger says about one session.
    struct Session {
        var id: String
        var firstSeenMs: Int64
        /// Its newest line or payload: a crashed session was alive at least until then.
        var lastSeenMs: Int64
        var startedAtMs: Int64?
        var endedAtMs: Int64?
        var crashed = false
        /// Ended cleanly by the session index's word, which may lack the time.
        var terminated = false
        /// When a crashed session was last known alive (its `crashed` line's `lastAliveMs`).
        var lastAliveMs: Int64?
        var app: String?
        var version: String?
        var pid: Int64?

        init(id: String, firstSeenMs: Int64) {
            self.id = id
            self.firstSeenMs = firstSeenMs
            lastSeenMs = firstSeenMs
        }

        /// What became of it: a crash wins (a process killed after its `end` line but before its
        /// journal's end marker is recovered as crashed), then any sign of a clean end.
        var status: ReportBuilder.SessionStatus {
            crashed ? .crashed : endedAtMs != nil || terminated ? .terminated : .active
        }
    }

    /// One culprit of hang lines.
    struct Culprit {
        var count = 0
        var maxMs = 0.0
        var targets: Set<String> = []
    }

    /// Most distinct span names and sessions tracked; beyond, lines are counted as omitted. A real
    /// program has far fewer; the bound only keeps a fabricated input from exhausting memory.
    static let maximumNames = 10_000
    /// Most (span name, session) pairs tracked one by one. Beyond, a pair's lines still count in
    /// its name's figures, but not in its per-session tally (``SpanLines/untracked``).
    static let maximumSpanSessions = 100_000

    /// Encoded events, oldest first, starting at `head` (a queue that drops its oldest).
    private(set) var lines: [[UInt8]] = []
    private var head = 0
    private var keptBytes = 0
    let keepBytes: Int
    /// Events dropped from the front because newer ones already filled the cap.
    private(set) var droppedOldest = 0

    var spans: [String: SpanLines] = [:]
    /// Lines the `dropped` lines say were lost, by cause.
    var droppedLines: [String: Int64] = [:]
    /// Span ends each session's span memory had no room for (its largest figure), by session.
    var droppedSpanRecords: [String: Int64] = [:]
    /// Over-budget spans each session's sampler found no profile slot for (its largest figure).
    var droppedSpanProfiles: [String: Int64] = [:]
    var sessions: [String: Session] = [:]
    /// Each session's newest snapshot, by session id: which lines its histograms already hold.
    let covers: [String: SnapshotCover]
    /// ``maximumSpanSessions``, or a smaller bound a test sets.
    let spanSessionBound: Int
    /// (name, session) pairs tracked in ``SpanLines/sessions``.
    private(set) var spanSessionPairs = 0
    /// Lines of pairs past the bound: in their name's figures, through its `untracked`.
    private(set) var untrackedSpanLines = 0
    /// Span lines of names past ``maximumNames``: in no figure.
    var omittedSpanNames = 0
    var omittedSessions = 0
    var hangCount = 0
    var fatalHangs = 0
    var suppressedHangs = 0
    var hangTotalMs = 0.0
    var hangMaxMs = 0.0
    var hangDurations = LatencyHistogram()
    var culprits: [String: Culprit] = [:]
    var newestMs: Int64?
    var summary = LedgerReader.Summary()

    init(keepBytes: Int, covers: [String: SnapshotCover] = [:], spanSessionBound: Int = Self.maximumSpanSessions) {
        self.keepBytes = keepBytes
        self.covers = covers
        self.spanSessionBound = spanSessionBound
    }

    /// The kept lines, oldest first.
    var keptLines: ArraySlice<[UInt8]> { lines[head...] }

    /// Reads the ledger of `directory`.
    static func read(directory: String, keepBytes: Int, covers: [String: SnapshotCover]) throws(Perf.ReportError)
        -> LedgerDigest
    {
        var digest = LedgerDigest(keepBytes: keepBytes, covers: covers)
        let reader = LedgerReader(
            directory: URL(fileURLWithPath: directory), maximumLineBytes: ReportLimits.maximumLineBytes)
        do {
            digest.summary = try reader.forEachEvent { digest.add($0) }
        } catch {
            throw Perf.ReportError(.unreadable, path: error.path, Perf.ReportError.describe(errno: error.errno ?? EIO))
        }
        return digest
    }

    mutating func add(_ event: LedgerEvent) {
        newestMs = max(newestMs ?? event.timestampMs, event.timestampMs)
        var encoded: [UInt8] = []
        LedgerEncoder.encodeLine(event, into: &encoded)
        encoded.removeLast()  // the "\n"
        keep(encoded)
        noteSession(event)
        switch event.kind {
        case .span: addSpan(event)
        case .hang: addHang(event)
        case .dropped:
            // Lines of writers that predate causes were all lost by the writer itself.
            let cause: String
            if case .string(let named)? = event.extra["cause"] {
                cause = named
            } else {
                cause = LedgerWriter.writeCause
            }
            // Causes are a short fixed list; a ledger naming more (damaged, hostile) folds them into `other`.
            let named = String(cause.prefix(64))
            let key = droppedLines[named] != nil || droppedLines.count < 8 ? named : "other"
            droppedLines[key, default: 0] &+= Int64(max(event.count ?? 0, 0))
        case .diagnostic:
            if case .int(let dropped)? = event.extra["droppedSpanRecords"] {
                Self.noteLargest(dropped, of: event.session, in: &droppedSpanRecords)
            }
            if case .int(let dropped)? = event.extra["droppedSpanProfiles"] {
                Self.noteLargest(dropped, of: event.session, in: &droppedSpanProfiles)
            }
        case .session:
            if case .int(let dropped)? = event.extra["droppedRecords"] {
                Self.noteLargest(dropped, of: event.session, in: &droppedSpanRecords)
            }
            if case .int(let dropped)? = event.extra["profilesDropped"] {
                Self.noteLargest(dropped, of: event.session, in: &droppedSpanProfiles)
            }
        default: break
        }
    }

    /// A session's dropped counts grow over its life: its largest figure counts.
    private static func noteLargest(_ dropped: Int64, of session: String, in counts: inout [String: Int64]) {
        guard dropped > 0 else { return }
        if counts[session] != nil || counts.count < Self.maximumNames {
            counts[session] = max(counts[session] ?? 0, dropped)
        }
    }

    private mutating func keep(_ line: [UInt8]) {
        lines.append(line)
        keptBytes += line.count + 1
        while keptBytes > keepBytes, head < lines.count {
            keptBytes -= lines[head].count + 1
            lines[head] = []
            head += 1
            droppedOldest += 1
        }
        // Compact once the dropped prefix dominates, so memory stays proportional to the cap.
        if head > 4096, head * 2 > lines.count {
            lines.removeFirst(head)
            head = 0
        }
    }

    private mutating func noteSession(_ event: LedgerEvent) {
        if sessions[event.session] == nil {
            guard sessions.count < Self.maximumNames else {
                omittedSessions += 1
                return
            }
            sessions[event.session] = Session(id: event.session, firstSeenMs: event.timestampMs)
        }
        if let known = sessions[event.session]?.lastSeenMs, event.timestampMs > known {
            sessions[event.session]?.lastSeenMs = event.timestampMs
        }
        guard event.kind == .session else { return }
        sessions[event.session].map { existing in
            var session = existing
            switch event.name {
            case "start": session.startedAtMs = session.startedAtMs ?? event.timestampMs
            case "end": session.endedAtMs = event.timestampMs
            case "crashed":
                session.crashed = true
                session.startedAtMs = session.startedAtMs ?? event.timestampMs
            default: break
            }
            if case .string(let app)? = event.extra["app"] { session.app = app }
            if case .string(let version)? = event.extra["version"] { session.version = version }
            if case .int(let pid)? = event.extra["pid"] { session.pid = pid }
            if event.name == "crashed", case .int(let alive)? = event.extra["lastAliveMs"], alive >= 0 {
                session.lastAliveMs = alive
            }
            sessions[event.session] = session
        }
    }

    private mutating func addSpan(_ event: LedgerEvent) {
        if spans[event.name] == nil, spans.count >= Self.maximumNames {
            omittedSpanNames += 1
            return
        }
        // A line without a session id is a group of its own, which no snapshot covers.
        let cover = event.session.isEmpty ? nil : covers[event.session]
        var track = spans[event.name]?.sessions[event.session] != nil
        if !track, spanSessionPairs < spanSessionBound {
            spanSessionPairs += 1
            track = true
        }
        if !track { untrackedSpanLines += 1 }
        // Mutated in place through the subscript: copying the histogram out and back per line
        // would dominate the build time of a large ledger.
        spans[event.name, default: SpanLines()].add(event, cover: cover, track: track)
    }

    private mutating func addHang(_ event: LedgerEvent) {
        if event.suppressed != nil {
            suppressedHangs += 1
            return
        }
        hangCount += 1
        if event.fatal == true { fatalHangs += 1 }
        let duration = max(event.durationMs ?? event.stallMs ?? event.lowerMs ?? 0, 0)
        hangTotalMs += duration
        hangMaxMs = max(hangMaxMs, duration)
        hangDurations.record(nanos: ReportLimits.nanos(ms: duration))
        let culprit = String((event.culprit ?? "unknown").prefix(ReportLimits.maximumNameLength))
        if culprits[culprit] != nil || culprits.count < 256 {
            var entry = culprits[culprit, default: Culprit()]
            entry.count += 1
            entry.maxMs = max(entry.maxMs, duration)
            if entry.targets.count < 16 {
                entry.targets.insert(String(event.name.prefix(ReportLimits.maximumNameLength)))
            }
            culprits[culprit] = entry
        }
    }
}

/// Fixed limits of report building.
enum ReportLimits {
    /// Ledger lines longer than this are counted as malformed (a Perf line is a few KiB at most).
    static let maximumLineBytes = 256 * 1024
    /// Payload files larger than this are skipped as invalid (a real one is tens of KiB).
    static let maximumPayloadBytes = 8 * 1024 * 1024
    /// Culprits and hang targets are cut to this many characters.
    static let maximumNameLength = 512
    /// The report lists at most this many culprits and hang targets (the most frequent).
    static let maximumListedHangEntries = 20
    /// Room kept free under the cap for `truncated`, the separators and the closing braces.
    static let reserveBytes = 1024

    static func nanos(ms: Double) -> UInt64 {
        guard ms.isFinite, ms > 0 else { return 0 }
        // Rounded, not truncated: 1.001 ms is 1000999.99… ns as a double, and the report now
        // shows nanoseconds.
        return UInt64((min(ms, 1e12) * 1_000_000).rounded())
    }
}
