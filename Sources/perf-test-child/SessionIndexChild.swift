// `perf-test-child sessions <dir> <ledgerCapBytes> <spans>`: one of several processes sharing a
// data directory. Installs Perf with a small ledger cap (so the ledger rotates under it), ends
// `spans` over-budget spans, prints "ready", waits for its stdin to close (so the parent can hold
// every child live at once), ends as many spans again, shuts down cleanly and prints "done".
import Foundation
import Glibc
import Perf

enum SessionIndexChild {
    static func run(_ arguments: [String]) -> Int32 {
        guard arguments.count == 3, let cap = Int(arguments[1]), let spans = Int(arguments[2]) else {
            FileHandle.standardError.write(
                Data("usage: perf-test-child sessions <dir> <ledgerCapBytes> <spans>\n".utf8))
            return 2
        }
        Perf.install(
            Perf.Configuration(
                directory: URL(fileURLWithPath: arguments[0]), app: Perf.AppInfo(name: "sessions-child", version: "2"),
                recording: .enabled, ledgerCapBytes: cap))
        endSpans(spans)
        guard say("ready\n") else { return 1 }
        // Blocks until the parent closes stdin (end of file) or dies.
        var byte: UInt8 = 0
        while read(0, &byte, 1) > 0 {}
        endSpans(spans)
        Perf.shutdown()
        return say("done\n") ? 0 : 1
    }

    private static func endSpans(_ count: Int) {
        for sequence in 0..<count {
            let span = Perf.begin("child.work", slowMs: 0)
            span.end(count: sequence)
        }
    }

    @discardableResult
    private static func say(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) } == bytes.count
    }
}
