// A ledger handed where a report belongs: said so, with the command that builds the report from
// it, instead of "not valid JSON".
import Foundation
import Perf
import PerfCore

enum LedgerLookalike {
    /// The longest first line looked at: a ledger line is far shorter.
    static let firstLineLimit = 64 * 1_024

    /// The problem to report when `bytes`, which are not a report, are a ledger: its first line
    /// is a JSON object with the `v`, `ts` and `kind` every ledger line has, or the file is named
    /// like one (`perf-events.jsonl`, `perf-events.jsonl.prev`) whatever its first line holds.
    /// `nil` for anything else.
    static func problem(_ bytes: [UInt8], path: String) -> String? {
        guard startsWithLedgerLine(bytes) || isLedgerName(path) else { return nil }
        let directory = directory(of: path)
        return "a Perf ledger (one event per line), not a performance report; build the report from its data "
            + "directory: perf-report build --dir \(quoted(directory))"
    }

    static func startsWithLedgerLine(_ bytes: [UInt8]) -> Bool {
        let end = bytes.prefix(firstLineLimit).firstIndex(of: UInt8(ascii: "\n")) ?? min(bytes.count, firstLineLimit)
        guard let object = try? JSONScanner.foundationValue(Array(bytes[..<end])) as? [String: Any] else {
            return false
        }
        return object["v"] is NSNumber && object["ts"] is String && object["kind"] is String
            && object["schema"] == nil
    }

    static func isLedgerName(_ path: String) -> Bool {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return name == "perf-events.jsonl" || name.hasPrefix("perf-events.jsonl.")
    }

    /// The folder part of `path` as given: `.` for a bare file name, so the suggested command
    /// runs from where the user typed theirs.
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// `path` as one shell word.
    private static func quoted(_ path: String) -> String {
        let plain = path.unicodeScalars.allSatisfy {
            CharacterSet.alphanumerics.contains($0) || "/._-+:=@%,".unicodeScalars.contains($0)
        }
        return plain && !path.isEmpty ? path : "'" + path.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}
