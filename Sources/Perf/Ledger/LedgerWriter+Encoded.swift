// Appends lines that were encoded elsewhere (the ledger queue's runs) and the `dropped` lines that
// count lines lost before they reached the writer.
import CPerfShims

extension LedgerWriter {
    /// Appends already encoded whole lines (`count` of them, each `\n`-terminated) in order, in
    /// runs that each fit the cap, one `write(2)` per run; `session` is the newest line's.
    ///
    /// - Returns: How many lines were not written (each counted as dropped and reported, as
    ///   ``append(_:)`` does).
    func append(encodedLines bytes: ArraySlice<UInt8>, count: Int, session: String) -> Int {
        let timestampMs = Int64(perf_realtime_ns() / 1_000_000)
        let runLimit = min(capBytes, Self.batchBytes)
        var failed = 0
        var runStart = bytes.startIndex
        var runLines = 0
        var lineStart = bytes.startIndex
        func flush(upTo end: Int) {
            guard runLines > 0 else { return }
            do throws(LedgerError) {
                try appendLines(bytes[runStart..<end], count: runLines, session: session, timestampMs: timestampMs)
            } catch {
                failed += runLines
            }
            runLines = 0
        }
        while lineStart < bytes.endIndex {
            let lineEnd = (bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex - 1) + 1
            if lineEnd - lineStart > capBytes {
                flush(upTo: lineStart)
                recordDrop(1)
                failed += 1
                runStart = lineEnd
            } else if lineEnd - runStart > runLimit, runLines > 0 {
                flush(upTo: lineStart)
                runStart = lineStart
                runLines = 1
            } else {
                runLines += 1
            }
            lineStart = lineEnd
        }
        flush(upTo: bytes.endIndex)
        return failed
    }

    /// Writes a `dropped` line: `count` lines meant for the ledger were lost before the writer saw
    /// them, for `cause` (LedgerFormat.md's Losses).
    func appendDropped(_ count: Int, cause: String, session: String) {
        var line = LedgerEvent(
            kind: .dropped, name: "ledger", session: session, timestampMs: Int64(perf_realtime_ns() / 1_000_000))
        line.count = count
        line.extra["cause"] = .string(cause)
        try? append(line)
    }
}
