// The text of the stderr lines `Perf.Configuration.logToStandardError` asks for, and their rate
// limit, as pure functions: one grep-able line per hang, fatal hang and crashed session, with
// every part that came from the program passed through the ledger's privacy filter.
import PerfCore

/// The lines, each starting `perf: `, without the newline.
enum LogLineText {
    /// `perf: hang 612 ms on db.writer in Store.load() (read(fd 7 → /var/lib/app/db.sqlite))`;
    /// `hitch` for a hitch, `(in progress)` appended when the watchdog stopped during it.
    static func hang(_ hang: HangRecord) -> String {
        let ms = hang.durationMs ?? (hang.lowerMs + hang.upperMs) / 2
        var line = "perf: \(hang.kind == .hang ? "hang" : "hitch") \(milliseconds(ms)) ms"
        line += episodeText(target: hang.targetName, culprit: hang.culprit, wait: hang.wait)
        if hang.inProgress { line += " (in progress)" }
        return line
    }

    /// The crashed session's line, then one per hang it died in:
    /// `perf: session 18dfb7403dc988c9 crashed (app myservice 1.4.0, pid 812)` and
    /// `perf: fatal hang 1500 ms on db.writer in Store.load() (…) (session <id> crashed)`.
    /// Nothing for a session that ended cleanly or could not be read.
    static func recovered(_ session: RecoveredSession) -> [String] {
        guard case .crashed = session.status else { return [] }
        let id = clean(session.id)
        var identity: [String] = []
        if let info = session.info {
            identity.append(clean("app \(info.app.name) \(info.app.version)"))
            identity.append("pid \(info.pid)")
        }
        var lines = ["perf: session \(id) crashed" + (identity.isEmpty ? "" : " (\(identity.joined(separator: ", ")))")]
        for marker in session.fatalMarkers {
            let kind = marker.kind == "hitch" ? "hitch" : "hang"
            lines.append(
                "perf: fatal \(kind) \(milliseconds(Double(marker.lastKnownDurationNanos) / 1_000_000)) ms"
                    + episodeText(target: marker.name, culprit: marker.payload["culprit"], wait: marker.payload["wait"])
                    + " (session \(id) crashed)")
        }
        return lines
    }

    /// `perf: 5 more lines suppressed (at most 10 per 60 s)`.
    static func suppressed(_ count: Int, maximum: Int, windowNanos: UInt64) -> String {
        let seconds = Double(windowNanos) / 1e9
        let window = seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
        return "perf: \(count) more line\(count == 1 ? "" : "s") suppressed (at most \(maximum) per \(window) s)"
    }

    /// ` on <target> in <culprit> (<wait>)`, each part only when known. A culprit that is a
    /// merged function or a thunk says so after its name, `in App.load() -> () (merged)`, past
    /// the privacy filter's cut so a long name cannot lose it.
    private static func episodeText(target: String, culprit: String?, wait: String?) -> String {
        var text = " on \(nonEmpty(clean(target)) ?? "unknown target")"
        if let (name, mark) = culprit.map(SymbolNames.marked), let name = nonEmpty(clean(name)) {
            text += " in \(name)" + (mark.map { " (\($0.rawValue))" } ?? "")
        }
        if let wait = wait.map(clean).flatMap(nonEmpty) { text += " (\(wait))" }
        return text
    }

    /// What the ledger's privacy filter keeps: no URL query, host or user, no content, no
    /// control character (so one line stays one line), at most 128 bytes.
    private static func clean(_ text: String) -> String { PrivacyFilter.sanitize(detail: text) }

    private static func nonEmpty(_ text: String) -> String? { text.isEmpty ? nil : text }

    private static func milliseconds(_ ms: Double) -> Int { ms.isFinite ? Int(max(0, min(ms, 1e12)).rounded()) : 0 }
}

/// At most `maximum` lines per window: the first line opens a window, lines past the maximum in
/// it are counted, and the count is told once the window is over.
struct LogRateLimit: Equatable {
    let maximum: Int
    let windowNanos: UInt64
    private(set) var windowStart: UInt64?
    private(set) var written = 0
    /// Lines refused in the current window.
    private(set) var suppressed = 0

    init(maximum: Int, windowNanos: UInt64) {
        self.maximum = max(0, maximum)
        self.windowNanos = max(1, windowNanos)
    }

    /// Whether a line may be written at `now`; `report` is the count of lines suppressed in a
    /// window that ended before it, to be told first (0 when none).
    mutating func admit(at now: UInt64) -> (admitted: Bool, report: Int) {
        var report = 0
        if let start = windowStart, now &- start < windowNanos {
            // Still in the window.
        } else {
            report = reopen()
            windowStart = now
        }
        guard written < maximum else {
            suppressed += 1
            return (false, report)
        }
        written += 1
        return (true, report)
    }

    /// Counts a line admitted but not written after all (the queue was full) as suppressed.
    mutating func refuse() { suppressed += 1 }

    /// When the current window ends, if it has lines to tell about.
    var reportDue: UInt64? {
        guard suppressed > 0, let windowStart else { return nil }
        return windowStart &+ windowNanos
    }

    /// The count to tell once the window is over at `now` (0 while it lasts, or with none); the
    /// window is then closed, and the next line opens another.
    mutating func expire(at now: UInt64) -> Int {
        guard let due = reportDue, now >= due else { return 0 }
        return reopen()
    }

    /// The count still untold, at the end of the log; the window closes.
    mutating func drain() -> Int { reopen() }

    private mutating func reopen() -> Int {
        defer {
            windowStart = nil
            written = 0
            suppressed = 0
        }
        return suppressed
    }
}
