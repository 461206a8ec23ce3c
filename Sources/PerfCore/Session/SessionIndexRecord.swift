// One session's entry in the session index (`sessions/<id>.session.json`): what is known of a
// session without its ledger lines, as bytes that any reader can take apart without trusting them.
import Foundation

/// What the session index knows of one session: who ran it, when it started, and how it ended.
///
/// Written by ``SessionStore`` at the session's start (`active`), at its clean end
/// (`terminated`, with ``endedAtMs``) and by the recovery that finds it crashed (`crashed`, with
/// ``lastAliveAtMs`` when the span memory told). The report reads these records so a session
/// whose ledger lines rotated away is still listed with its start, end and status.
public struct SessionIndexRecord: Sendable, Equatable {
    /// How the session ended, as far as the index knows.
    public enum Status: String, Sendable, Equatable {
        /// Started; no clean end and no recovery has been recorded (still running, or died and
        /// not yet recovered).
        case active
        /// Ended cleanly.
        case terminated
        /// Died; the next start's recovery found no end marker.
        case crashed
    }

    /// The session id (also the record's file name).
    public var id: String
    /// The process id of the run.
    public var pid: Int32
    /// The program that ran.
    public var app: SessionInfo.App
    /// When the session started, in milliseconds since the Unix epoch.
    public var startedAtMs: Int64
    /// How it ended.
    public var status: Status
    /// When it ended cleanly, in milliseconds since the Unix epoch.
    public var endedAtMs: Int64?
    /// For a crashed session, when it was last known alive (span memory's heartbeat or last span).
    public var lastAliveAtMs: Int64?

    /// Creates a record.
    public init(
        id: String, pid: Int32, app: SessionInfo.App, startedAtMs: Int64, status: Status, endedAtMs: Int64? = nil,
        lastAliveAtMs: Int64? = nil
    ) {
        self.id = id
        self.pid = pid
        self.app = app
        self.startedAtMs = startedAtMs
        self.status = status
        self.endedAtMs = endedAtMs
        self.lastAliveAtMs = lastAliveAtMs
    }

    /// The `active` record of a session that is starting.
    public init(starting info: SessionInfo) {
        self.init(
            id: info.id, pid: info.pid, app: info.app, startedAtMs: Self.milliseconds(info.startWallNanos),
            status: .active)
    }

    /// Wall nanoseconds as whole milliseconds, truncated like the ledger's timestamps.
    static func milliseconds(_ wallNanos: UInt64) -> Int64 { Int64(clamping: wallNanos / 1_000_000) }
}

/// The bytes of a record: one compact JSON object with sorted keys, and a reader that never
/// traps and skips what it does not know.
enum SessionIndexCodec {
    /// The record format this build writes and reads; a record of a newer one is skipped.
    static let version = 1
    /// Records larger than this are not records (a real one is under 1 KiB).
    static let maximumBytes = 16 * 1024
    /// Milliseconds past the year 9999 are not times.
    static let maximumMs: Int64 = 253_402_300_799_999

    private struct Wire: Codable {
        var version: Int?
        var id: String?
        var pid: Int64?
        var app: SessionInfo.App?
        var startedAtMs: Int64?
        var status: String?
        var endedAtMs: Int64?
        var lastAliveAtMs: Int64?

        init(_ record: SessionIndexRecord) {
            version = SessionIndexCodec.version
            id = record.id
            pid = Int64(record.pid)
            app = record.app
            startedAtMs = record.startedAtMs
            status = record.status.rawValue
            endedAtMs = record.endedAtMs
            lastAliveAtMs = record.lastAliveAtMs
        }

        enum CodingKeys: String, CodingKey { case version, id, pid, app, startedAtMs, status, endedAtMs, lastAliveAtMs }

        /// Each member on its own: one of the wrong type reads as absent rather than losing the record.
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            version = (try? container.decodeIfPresent(Int.self, forKey: .version)) ?? nil
            id = (try? container.decodeIfPresent(String.self, forKey: .id)) ?? nil
            pid = (try? container.decodeIfPresent(Int64.self, forKey: .pid)) ?? nil
            app = (try? container.decodeIfPresent(SessionInfo.App.self, forKey: .app)) ?? nil
            startedAtMs = (try? container.decodeIfPresent(Int64.self, forKey: .startedAtMs)) ?? nil
            status = (try? container.decodeIfPresent(String.self, forKey: .status)) ?? nil
            endedAtMs = (try? container.decodeIfPresent(Int64.self, forKey: .endedAtMs)) ?? nil
            lastAliveAtMs = (try? container.decodeIfPresent(Int64.self, forKey: .lastAliveAtMs)) ?? nil
        }
    }

    static func encode(_ record: SessionIndexRecord) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding strings and integers cannot fail.
        var bytes = (try? [UInt8](encoder.encode(Wire(record)))) ?? []
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// The record in `bytes`, or `nil` when they are not a record this build reads: not JSON, too
    /// large, a newer `version`, a missing or invalid `id`, `startedAtMs` or `status`, or an id
    /// other than `expectedID`. Optional members of the wrong type or out of range read as absent.
    static func decode(_ bytes: [UInt8], expectedID: String? = nil) -> SessionIndexRecord? {
        guard !bytes.isEmpty, bytes.count <= maximumBytes,
            // JSON as every reader of the package reads it; JSONDecoder lets a trailing comma by.
            (try? JSONScanner(bytes)) != nil,
            let wire = try? JSONDecoder().decode(Wire.self, from: Data(bytes)),
            let version = wire.version, version >= 1, version <= Self.version,
            let id = wire.id, SessionInfo.isValidID(id), expectedID.map({ $0 == id }) ?? true,
            let startedAtMs = wire.startedAtMs.flatMap(time),
            let status = wire.status.flatMap(SessionIndexRecord.Status.init(rawValue:))
        else { return nil }
        let pid = wire.pid.flatMap { Int32(exactly: $0) } ?? 0
        return SessionIndexRecord(
            id: id, pid: pid, app: wire.app ?? SessionInfo.App(name: "", version: "", build: ""),
            startedAtMs: startedAtMs, status: status,
            endedAtMs: wire.endedAtMs.flatMap(time), lastAliveAtMs: wire.lastAliveAtMs.flatMap(time))
    }

    private static func time(_ ms: Int64) -> Int64? { ms >= 0 && ms <= maximumMs ? ms : nil }
}
