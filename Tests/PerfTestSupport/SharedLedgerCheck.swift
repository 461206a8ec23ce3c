// What several processes that appended to one data directory's ledger must leave behind, checked
// from the files alone: shared by the multi-process ledger test and the reliability scenario.
import Foundation

/// The ledger files of a directory that several writers (`perf-test-child reliability writer …
/// acks=0`, each ending `lines` over-budget spans whose `count` is their sequence) appended to.
public struct SharedLedgerCheck: Sendable {
    /// Bytes of `perf-events.jsonl` and of `.prev` (nil when the ledger never rotated).
    public var currentBytes = 0
    public var previousBytes: Int?
    /// Lines that are not a JSON object.
    public var unparsable = 0
    /// Span lines kept, per session, in file order (`.prev` first).
    public var kept: [String: [Int]] = [:]
    /// Lines the `dropped` lines report lost.
    public var reportedDropped = 0
    /// What does not hold, one sentence each; empty when everything does.
    public var problems: [String] = []

    /// Reads `perf-events.jsonl.prev` and `perf-events.jsonl` in `directory` and checks them
    /// against the cap and the writers' sessions.
    ///
    /// - Parameters:
    ///   - directory: The shared data directory.
    ///   - cap: The ledger cap the writers used.
    ///   - sessions: The writers' session ids (each printed `session <id>`).
    ///   - lines: How many spans each writer ended.
    public init(directory: URL, cap: Int, sessions: [String], lines: Int) {
        var spans: [String: [Int]] = [:]
        for name in ["perf-events.jsonl.prev", "perf-events.jsonl"] {
            guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path)
            else {
                if name == "perf-events.jsonl" { problems.append("no \(name)") }
                continue
            }
            if name.hasSuffix(".prev") { previousBytes = data.count } else { currentBytes = data.count }
            if data.count > cap { problems.append("\(name) holds \(data.count) bytes, over the \(cap)-byte cap") }
            for line in data.split(separator: UInt8(ascii: "\n")) {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
                    unparsable += 1
                    continue
                }
                let kind = object["kind"] as? String
                if kind == "dropped" { reportedDropped += object["count"] as? Int ?? 0 }
                guard kind == "span", let session = object["session"] as? String, let count = object["count"] as? Int
                else { continue }
                spans[session, default: []].append(count)
            }
        }
        kept = spans
        if unparsable > 0 { problems.append("\(unparsable) unparsable lines") }
        if let previousBytes, previousBytes * 10 < cap * 9 {
            problems.append("the ledger rotated with .prev only \(previousBytes) of \(cap) bytes full")
        }
        var missing = 0
        for session in sessions {
            let counts = spans[session] ?? []
            guard let first = counts.first, let last = counts.last else { continue }
            if last != lines - 1 { problems.append("session \(session)'s kept lines end at \(last), not \(lines - 1)") }
            for (index, count) in counts.enumerated() where count != first + index {
                problems.append("session \(session)'s kept lines jump to \(count) after \(first + index - 1)")
                missing += max(0, count - (first + index))
                break
            }
        }
        for session in spans.keys where !sessions.contains(session) {
            problems.append("span lines of an unknown session \(session)")
        }
        if missing > reportedDropped {
            problems.append("\(missing) lines missing between kept ones, \(reportedDropped) reported dropped")
        }
        let total = spans.values.reduce(0) { $0 + $1.count }
        if total == 0 { problems.append("no span line kept at all") }
    }

    /// One line for a table: sizes and lines kept per writer.
    public var summary: String {
        let perWriter = kept.values.map(\.count).sorted(by: >).map(String.init).joined(separator: "/")
        return "current \(currentBytes) B, .prev \(previousBytes.map { "\($0) B" } ?? "none"), kept \(perWriter)"
    }
}
