// The opt-in stderr log of hangs, fatal hangs and crashed sessions (`Perf.LogLines`), for a
// service whose stderr is its log (journald keeps a unit's stderr). Records arrive through the
// pipeline as an inline sink, which only queues the few it wants; a thread of its own formats
// and writes them, so a stderr that blocks (a full pipe) delays that thread alone, never the
// pipeline's ordering lock or the program's threads.
import Foundation
import PerfCore

extension Perf {
    /// One line on stderr per hang, fatal hang and crashed session, in a form `grep` and
    /// `journalctl -g` find:
    ///
    /// ```
    /// perf: hang 612 ms on db.writer in Store.load() (read(fd 7 → /var/lib/app/db.sqlite))
    /// perf: session 18dfb7403dc988c9 crashed (app myservice 1.4.0, pid 29606)
    /// perf: fatal hang 2776 ms on db.writer in Store.load() (clock_nanosleep(60 s)) (session 18dfb7403dc988c9 crashed)
    /// perf: 7 more lines suppressed (at most 10 per 60 s)
    /// ```
    ///
    /// Turned on by ``Configuration/logToStandardError``; off by default, and then Perf writes
    /// nothing to stderr for hangs. A hang's line is written when it ends (the watchdog's
    /// `hang`, not a suppressed episode); a crashed session and the hang it died in are told by
    /// the next start, when it recovers them (which needs recording to disk). A culprit that is a
    /// merged function or compiler glue says so after its name, `(merged)` or `(thunk)`. The
    /// target, culprit and wait pass through ``PrivacyFilter``, as a ledger line's `detail` does. Lines are
    /// written with one `write(2)` each, so they never interleave with the program's, by a
    /// thread of Perf's own, never on a thread of the program; at most ``maximumLines`` per
    /// ``window``, and once the window is over one line says how many more there were.
    public struct LogLines: Sendable, Equatable {
        /// Most lines written per ``window``.
        public var maximumLines: Int
        /// The rate limit's window, from its first line.
        public var window: Duration
        /// Whether hitches get a line too (`perf: hitch 150 ms on …`).
        public var includeHitches: Bool

        /// Creates the setting: by default at most 10 lines a minute, hangs only.
        public init(maximumLines: Int = 10, window: Duration = .seconds(60), includeHitches: Bool = false) {
            self.maximumLines = maximumLines
            self.window = window
            self.includeHitches = includeHitches
        }
    }
}

/// The queue and writer thread behind ``Perf/LogLines``.
///
/// `@unchecked Sendable`: every mutable field is guarded by `condition` (the writer thread sleeps
/// on it until a line is queued or the rate limit's window ends).
final class StandardErrorLog: RecordSink, @unchecked Sendable {
    /// A queued line: a hang is formatted on the writer thread, not under the pipeline's lock.
    private enum Entry {
        case hang(HangRecord)
        case text(String)
    }

    /// Lines queued and not yet written; more are counted as suppressed.
    static let capacity = 64

    private let includeHitches: Bool
    private let now: @Sendable () -> UInt64
    private let write: @Sendable ([UInt8]) -> Void
    private let condition = NSCondition()
    private var limit: LogRateLimit
    private var queue: [Entry] = []
    /// Lines handed to `write` and not yet returned from it.
    private var writing = 0
    private var finishing = false

    /// - Parameters:
    ///   - now: Monotonic nanoseconds, for the rate limit.
    ///   - write: Writes one line (with its newline); stderr by default.
    init(
        _ lines: Perf.LogLines, now: @escaping @Sendable () -> UInt64,
        write: @escaping @Sendable ([UInt8]) -> Void = StandardErrorLog.writeToStandardError
    ) {
        includeHitches = lines.includeHitches
        let window = lines.window.components
        let windowNanos =
            UInt64(max(0, window.seconds)) &* 1_000_000_000 &+ UInt64(max(0, window.attoseconds / 1_000_000_000))
        limit = LogRateLimit(maximum: lines.maximumLines, windowNanos: windowNanos)
        self.now = now
        self.write = write
        let thread = Thread { [self] in run() }
        thread.name = "perf.log"
        thread.start()
    }

    /// One `write(2)` loop on stderr: a line that cannot be written is lost, never a trap.
    static let writeToStandardError: @Sendable ([UInt8]) -> Void = { bytes in
        _ = bytes.withUnsafeBytes { FileSyscalls.live.writeAll(STDERR_FILENO, $0) }
    }

    /// Inline: queues a hang (a hitch when asked) and returns; anything else is ignored at once.
    func receive(_ record: SequencedRecord) {
        guard case .hang(let hang) = record.record, hang.suppressed == nil,
            hang.kind == .hang || includeHitches
        else { return }
        enqueue([.hang(hang)])
    }

    /// Queues the lines of the sessions this start recovered (crashed ones and their fatal hangs).
    func recovered(_ sessions: [RecoveredSession]) {
        enqueue(sessions.flatMap(LogLineText.recovered).map(Entry.text))
    }

    private func enqueue(_ entries: [Entry]) {
        guard !entries.isEmpty else { return }
        let time = now()
        condition.lock()
        defer { condition.unlock() }
        guard !finishing else { return }
        for entry in entries {
            let (admitted, report) = limit.admit(at: time)
            if report > 0 { append(.text(suppressedLine(report))) }
            if admitted { append(entry) }
        }
        condition.signal()
    }

    /// Appends under the lock; a full queue counts the line as suppressed instead.
    private func append(_ entry: Entry) {
        guard queue.count < Self.capacity else {
            limit.refuse()
            return
        }
        queue.append(entry)
    }

    private func suppressedLine(_ count: Int) -> String {
        LogLineText.suppressed(count, maximum: limit.maximum, windowNanos: limit.windowNanos)
    }

    /// Writes what is queued and the count still untold, waits up to `timeoutSeconds` for the
    /// writes, and stops the thread. Lines arriving later are dropped.
    @discardableResult
    func finish(timeoutSeconds: Double = 1) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeoutSeconds)
        condition.lock()
        defer { condition.unlock() }
        if !finishing {
            let untold = limit.drain()
            if untold > 0 { queue.append(.text(suppressedLine(untold))) }
            finishing = true
            condition.broadcast()
        }
        while !queue.isEmpty || writing > 0 {
            if !condition.wait(until: deadline) { return queue.isEmpty && writing == 0 }
        }
        return true
    }

    private func run() {
        while let entries = nextEntries() {
            for entry in entries {
                let line: String
                switch entry {
                case .hang(let hang): line = LogLineText.hang(hang)
                case .text(let text): line = text
                }
                write(Array((line + "\n").utf8))
            }
            condition.lock()
            writing = 0
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Waits for lines (or the end of a window with lines to tell about) and takes them all;
    /// nil once finishing with nothing left.
    private func nextEntries() -> [Entry]? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty {
            if finishing { return nil }
            if let due = limit.reportDue {
                let time = now()
                let report = limit.expire(at: time)
                if report > 0 {
                    queue.append(.text(suppressedLine(report)))
                    break
                }
                _ = condition.wait(until: Date(timeIntervalSinceNow: Double(due &- time) / 1e9))
            } else {
                condition.wait()
            }
        }
        let entries = queue
        queue.removeAll(keepingCapacity: true)
        writing = entries.count
        return entries
    }
}
