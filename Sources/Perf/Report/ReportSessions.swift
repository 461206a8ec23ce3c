// The report's sessions: what the ledger's session lines say, filled in by the session index
// (`sessions/<id>.session.json`) where rotation took the lines, and how many were live at once.
import PerfCore

/// Sessions from every source the report has: ledger lines, payloads and the session index.
struct ReportSessions {
    /// Every session, newest first (by start, else first sighting; ties by id).
    let all: [LedgerDigest.Session]

    /// Merges the ledger's sessions, the payloads' (`payloadSessions`: id → oldest `takenAt`) and
    /// the index's records.
    ///
    /// The ledger's word stands where it has one; the index fills in what it lost: the start, the
    /// end of a session the index saw end cleanly, a crash, the pid and the app. A session known
    /// only from the index is listed, first seen at its start.
    init(digest: LedgerDigest, payloadSessions: [String: Int64], index: [SessionIndexRecord]) {
        var sessions = digest.sessions
        for (id, takenAtMs) in payloadSessions where sessions[id] == nil {
            sessions[id] = LedgerDigest.Session(id: id, firstSeenMs: takenAtMs)
        }
        for record in index {
            var session = sessions[record.id] ?? LedgerDigest.Session(id: record.id, firstSeenMs: record.startedAtMs)
            session.startedAtMs = session.startedAtMs ?? record.startedAtMs
            switch record.status {
            case .active: break
            case .terminated:
                session.terminated = true
                session.endedAtMs = session.endedAtMs ?? record.endedAtMs
            case .crashed:
                session.crashed = true
                session.lastAliveMs = session.lastAliveMs ?? record.lastAliveAtMs
            }
            if session.pid == nil, record.pid > 0 { session.pid = Int64(record.pid) }
            if session.app == nil, !record.app.name.isEmpty {
                session.app = record.app.name
                session.version = record.app.version
            }
            sessions[record.id] = session
        }
        all = sessions.values.sorted { lhs, rhs in
            let left = lhs.startedAtMs ?? lhs.firstSeenMs
            let right = rhs.startedAtMs ?? rhs.firstSeenMs
            return left != right ? left > right : lhs.id < rhs.id
        }
    }

    /// The newest time the index records tell (a start, an end, a last moment alive), so the
    /// report's `generatedAt` covers them.
    static func newestMs(_ index: [SessionIndexRecord]) -> Int64? {
        index.map { max($0.startedAtMs, $0.endedAtMs ?? 0, $0.lastAliveAtMs ?? 0) }.max()
    }

    /// Each session's JSON object, in ``all``'s order, with the time it sorts by.
    func json() -> [(startMs: Int64, json: ReportJSON)] {
        all.map { session in
            var members: [String: ReportJSON] = [
                "id": .string(session.id), "status": .string(session.status.rawValue),
                "startedAt": session.startedAtMs.map { .string(LedgerTimestamp.string(ms: $0)) } ?? .null,
                "endedAt": session.endedAtMs.map { .string(LedgerTimestamp.string(ms: $0)) } ?? .null,
                "firstSeenAt": .string(LedgerTimestamp.string(ms: session.firstSeenMs)),
            ]
            if let pid = session.pid { members["pid"] = .int(pid) }
            return (session.startedAtMs ?? session.firstSeenMs, .object(members))
        }
    }

    /// The most sessions live at one moment, each live over `[start, end)`: from its start (else
    /// its first sighting) to its clean end; a crashed one to when it was last known alive (else
    /// its newest line); an active one to `reportMs`, the report's time. A session that lasted
    /// no measurable time counts for a millisecond; one ending as another starts does not
    /// overlap it. Lines without a session id are no process and do not count.
    func maxConcurrent(reportMs: Int64) -> Int {
        var edges: [(ms: Int64, delta: Int)] = []
        edges.reserveCapacity(all.count * 2)
        for session in all where !session.id.isEmpty {
            let start = session.startedAtMs ?? session.firstSeenMs
            var end: Int64
            switch session.status {
            case .crashed: end = max(session.lastAliveMs ?? session.lastSeenMs, session.lastSeenMs)
            case .terminated: end = session.endedAtMs ?? session.lastSeenMs
            default: end = max(reportMs, session.lastSeenMs)
            }
            end = max(end, start &+ 1)
            edges.append((start, 1))
            edges.append((end, -1))
        }
        // Ends before starts at the same millisecond: half-open intervals.
        edges.sort { $0.ms != $1.ms ? $0.ms < $1.ms : $0.delta < $1.delta }
        var live = 0
        var most = 0
        for edge in edges {
            live += edge.delta
            most = max(most, live)
        }
        return most
    }
}
