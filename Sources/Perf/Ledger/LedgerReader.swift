// Streams perf-events.jsonl.prev then perf-events.jsonl, oldest first, counting what it skips.
import Foundation
import Glibc

/// Reads the ledger of a data directory, oldest line first.
///
/// The reader never fails on content: a final line without `\n` (torn by a kill) is counted
/// in ``Summary/tornTail``; a line that is not a schema v1 object (garbage, invalid UTF-8,
/// nesting deeper than 32, longer than ``maximumLineBytes``) is counted in
/// ``Summary/malformedLines``, and when such a line is a fragment with a whole line after it
/// (a write that a kill cut short, then another process's line appended to it), that line is
/// still read; a line of a kind this build does not know is counted in
/// ``Summary/unknownKinds`` and skipped unless asked for. Unknown keys are kept in
/// ``LedgerEvent/extra``. Memory stays bounded by one line, whatever the file holds.
///
/// ```swift
/// let (events, summary) = try LedgerReader(directory: dataDirectory).readAll()
/// ```
public struct LedgerReader: Sendable {
    /// What a read saw besides the events it delivered.
    public struct Summary: Sendable, Equatable {
        /// Events delivered to the caller.
        public var events: Int = 0
        /// Lines that did not parse as a schema v1 object. A fragment left by a write that a kill
        /// cut short counts here, also when another process's line followed it on the same line
        /// and was read (``Summary/gluedLines``).
        public var malformedLines: Int = 0
        /// Whole lines read from behind such a fragment: a kill cut a write short (the kernel
        /// can stop a `write(2)` at a page boundary), and another process, which could not know,
        /// appended its next line to the fragment. Each also counts in ``malformedLines``.
        public var gluedLines: Int = 0
        /// Files whose last line had no `\n`: a write cut short by a kill.
        public var tornTail: Int = 0
        /// Well-formed lines of kinds this build does not know.
        public var unknownKinds: Int = 0

        /// An empty summary.
        public init() {}
    }

    /// The data directory.
    public let directory: URL
    /// Lines longer than this are skipped as malformed without being held in memory.
    public let maximumLineBytes: Int

    /// A reader of `directory`'s `perf-events.jsonl.prev` and `perf-events.jsonl`.
    ///
    /// - Parameters:
    ///   - directory: The data directory.
    ///   - maximumLineBytes: The longest line considered; default 10 MB.
    public init(directory: URL, maximumLineBytes: Int = 10 * 1024 * 1024) {
        self.directory = directory
        self.maximumLineBytes = maximumLineBytes
    }

    /// Calls `body` with each event, `.prev` first, in file order.
    ///
    /// - Parameters:
    ///   - includingUnknownKinds: Also deliver lines whose kind this build does not know
    ///     (they are counted either way).
    ///   - body: Receives each event.
    /// - Returns: What was delivered and skipped.
    /// - Throws: ``LedgerError`` `.read` if a file exists but cannot be read. A missing
    ///   file is an empty one.
    @discardableResult
    public func forEachEvent(
        includingUnknownKinds: Bool = false, _ body: (LedgerEvent) -> Void
    ) throws(LedgerError) -> Summary {
        var summary = Summary()
        for name in [LedgerWriter.previousFileName, LedgerWriter.fileName] {
            let path = directory.appendingPathComponent(name).path
            let damage = try LedgerReader.streamLines(path: path, maximumLineBytes: maximumLineBytes) { line in
                let event: LedgerEvent
                if let whole = LedgerEvent.parse(line: line) {
                    event = whole
                } else {
                    summary.malformedLines += 1
                    guard let glued = LedgerReader.lineAfterAFragment(line) else { return }
                    summary.gluedLines += 1
                    event = glued
                }
                if !event.kind.isKnown {
                    summary.unknownKinds += 1
                    guard includingUnknownKinds else { return }
                }
                summary.events += 1
                body(event)
            }
            summary.malformedLines += damage.oversizedLines
            summary.tornTail += damage.tornTail ? 1 : 0
        }
        return summary
    }

    /// How many places `lineAfterAFragment` tries in one line, so that a long line of garbage
    /// costs a bounded number of parses.
    static let maximumFragmentSplits = 16

    /// The whole line at the end of `line`, behind a fragment: the first `{"` after the start from
    /// which the rest parses as a ledger line, or nil. A fragment is the start of a line cut
    /// anywhere, so the line appended to it begins at a later `{"`. A `{"` inside the fragment
    /// starts no such rest: what it opens is either closed before the cut (and the text after it
    /// does not continue an object) or still open at the appended line, whose braces balance.
    static func lineAfterAFragment(_ line: UnsafeBufferPointer<UInt8>) -> LedgerEvent? {
        var tries = 0
        var index = 1
        while index + 1 < line.count, tries < maximumFragmentSplits {
            if line[index] == UInt8(ascii: "{"), line[index + 1] == UInt8(ascii: "\"") {
                tries += 1
                if let event = LedgerEvent.parse(line: UnsafeBufferPointer(rebasing: line[index...])) { return event }
            }
            index += 1
        }
        return nil
    }

    /// Every event, oldest first, with the summary.
    public func readAll(includingUnknownKinds: Bool = false) throws(LedgerError) -> (
        events: [LedgerEvent], summary: Summary
    ) {
        var events: [LedgerEvent] = []
        let summary = try forEachEvent(includingUnknownKinds: includingUnknownKinds) { events.append($0) }
        return (events, summary)
    }

    /// Splits a file into `\n`-terminated lines in 64 KiB reads. Oversized lines are counted
    /// as malformed and skipped; an unterminated last line is counted as torn.
    static func streamLines(
        path: String, maximumLineBytes: Int, syscalls: FileSyscalls = .live,
        _ line: (UnsafeBufferPointer<UInt8>) -> Void
    ) throws(LedgerError) -> (oversizedLines: Int, tornTail: Bool) {
        var oversizedLines = 0
        let fd: Int32
        switch syscalls.openForReading(path) {
        case .success(let opened): fd = Int32(opened)
        case .failure(ENOENT): return (0, false)
        case .failure(let errno): throw .read(path: path, errno: errno)
        }
        defer { syscalls.close(fd) }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var pending: [UInt8] = []
        var skippingOversized = false
        while true {
            let count: Int
            switch chunk.withUnsafeMutableBytes({ syscalls.read(fd, into: $0) }) {
            case .success(let read): count = read
            case .failure(let errno): throw .read(path: path, errno: errno)
            }
            if count == 0 { break }
            chunk.withUnsafeBufferPointer { buffer in
                var start = 0
                for index in 0..<count where buffer[index] == UInt8(ascii: "\n") {
                    let piece = UnsafeBufferPointer(rebasing: buffer[start..<index])
                    if skippingOversized || pending.count + piece.count > maximumLineBytes {
                        oversizedLines += 1
                    } else if pending.isEmpty {
                        line(piece)
                    } else {
                        pending.append(contentsOf: piece)
                        pending.withUnsafeBufferPointer { line($0) }
                    }
                    pending.removeAll(keepingCapacity: true)
                    skippingOversized = false
                    start = index + 1
                }
                let rest = UnsafeBufferPointer(rebasing: buffer[start..<count])
                if !skippingOversized {
                    if pending.count + rest.count > maximumLineBytes {
                        skippingOversized = true
                        pending = []
                    } else {
                        pending.append(contentsOf: rest)
                    }
                }
            }
        }
        return (oversizedLines, skippingOversized || !pending.isEmpty)
    }
}
