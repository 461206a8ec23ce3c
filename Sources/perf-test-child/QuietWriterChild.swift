// `perf-test-child quiet-writer <dir> <lines> [cap]`: ends <lines> over-budget spans (`count` =
// sequence) and shuts Perf down, writing nothing itself: under a fault injected into every
// write(2) of the process (a full disk), whatever is written is Perf's, and the child's own
// output cannot fail (FileHandle.write would trap on ENOSPC).
import Foundation
import Perf

enum QuietWriterChild {
    static func run(_ arguments: [String]) -> Int32 {
        guard arguments.count >= 2, let lines = Int(arguments[1]) else { return 2 }
        let cap = arguments.count > 2 ? Int(arguments[2]) ?? (1 << 20) : 1 << 20
        Perf.install(
            Perf.Configuration(
                directory: URL(fileURLWithPath: arguments[0]), app: Perf.AppInfo(name: "quiet-writer", version: "1"),
                recording: .enabled, ledgerCapBytes: cap))
        for sequence in 0..<lines {
            let span = Perf.begin("reliability.write", slowMs: 0)
            span.end(detail: "/v1/items", count: sequence)
        }
        Perf.shutdown()
        return 0
    }
}
