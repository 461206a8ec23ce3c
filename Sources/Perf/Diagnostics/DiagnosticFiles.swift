// The perf-diagnostics/ folder: writing a payload so a kill never leaves a half file a reader
// accepts, keeping the newest 24, and listing what is there.
import Glibc
import PerfCore

/// Files of `perf-diagnostics/`.
///
/// A payload is written to a dot-prefixed temporary name and renamed into place, and readers
/// only list names of the form `<ts>-<session>.json` (`ts` as `20261202T130000123Z`, so the byte
/// order of names is time order): a payload cut short by a kill stays invisible.
///
/// Several writers share the folder (threads of one process, processes sharing the data
/// directory): each temporary name is its writer's alone (pid and 64 random bits), so two writers
/// of the same payload name never write into one file, and pruning lists payload names only, so it
/// never deletes a payload still being written. Temporary files older than ten minutes were
/// abandoned by a writer killed mid-write (a write takes milliseconds) and are deleted.
enum DiagnosticFiles {
    static let directoryName = "perf-diagnostics"
    /// How many payloads the folder keeps, across sessions.
    static let keep = 24

    /// The file name of a snapshot.
    static func fileName(takenAtMs: Int64, session: String) -> String {
        let iso = LedgerTimestamp.string(ms: takenAtMs)  // 2026-12-02T13:00:00.123Z
        let compact = iso.filter { $0 != "-" && $0 != ":" && $0 != "." }
        let safeSession = String(
            session.unicodeScalars.map { scalar -> Character in
                let ok =
                    (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z")
                    || (scalar >= "0" && scalar <= "9")
                return ok ? Character(scalar) : "_"
            }.prefix(64))
        return "\(compact)-\(safeSession).json"
    }

    /// Whether a name is a complete payload's (not a temporary file, not something else).
    static func isPayloadName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        // "YYYYMMDDTHHMMSSmmmZ-" is 20 bytes, then at least one session byte and ".json".
        guard bytes.count >= 26, name.hasSuffix(".json"), bytes[8] == UInt8(ascii: "T"),
            bytes[18] == UInt8(ascii: "Z"), bytes[19] == UInt8(ascii: "-")
        else { return false }
        return bytes[0..<8].allSatisfy(isDigit) && bytes[9..<18].allSatisfy(isDigit)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// Writes `bytes` as `name` in the folder (created `0700`), file `0600`, then keeps the newest
    /// ``keep`` payloads.
    ///
    /// - Returns: The payload's path.
    static func write(_ bytes: [UInt8], name: String, dataDirectory: String) throws(Perf.ReportError) -> String {
        let folder = dataDirectory + "/" + directoryName
        if case .failure(let errno) = FileSyscalls.live.makeDirectory(folder, mode: 0o700) {
            throw Perf.ReportError(.writeFailed, path: folder, Perf.ReportError.describe(errno: errno))
        }
        // The pid alone is not enough: two threads of one process may write the same name (same
        // session, same millisecond), and processes in separate pid namespaces may share a pid.
        let temporary = folder + "/.tmp-\(getpid())-\(SessionInfo.randomID())-" + name
        let final = folder + "/" + name
        try ReportFile.writeAtomically(bytes, to: final, temporary: temporary, mode: 0o600)
        prune(folder: folder)
        return final
    }

    /// Deletes all but the newest ``keep`` payloads, and temporary files abandoned by a writer
    /// that died (see `AbandonedTemporaries`); a temporary file being written is
    /// never touched. Another process pruning at the same time only makes some unlinks fail with
    /// ENOENT, which is harmless.
    static func prune(folder: String) {
        AbandonedTemporaries.remove(in: folder) { $0.hasPrefix(".tmp-") }
        guard let names = try? list(folder: folder), names.count > keep else { return }
        for name in names.dropLast(keep) { _ = FileSyscalls.live.unlink(folder + "/" + name) }
    }

    /// Payload names of a folder, oldest first; an absent folder has none.
    static func list(folder: String) throws(Perf.ReportError) -> [String] {
        let names: [String]
        switch FileSyscalls.live.listDirectory(folder) {
        case .success(let all): names = all.filter(isPayloadName)
        case .failure(let error) where error.errno == ENOENT: return []
        case .failure(let error):
            throw Perf.ReportError(.unreadable, path: folder, Perf.ReportError.describe(errno: error.errno))
        }
        return names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}

extension LedgerTimestamp {
    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` as a string.
    package static func string(ms: Int64) -> String {
        var out: [UInt8] = []
        appendISO8601(millisecondsSinceEpoch: ms, into: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
