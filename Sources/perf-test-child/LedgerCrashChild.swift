// `perf-test-child ledger-spans <dir> <run> [capBytes]`: appends over-budget span lines until
// killed, acknowledging each on stdout only after `append` returned, for the SIGKILL test.
import Foundation
import Glibc
import Perf

enum LedgerCrashChild {
    static func run(_ arguments: [String]) -> Int32 {
        guard arguments.count >= 2, let runNumber = Int(arguments[1]) else {
            FileHandle.standardError.write(Data("usage: perf-test-child ledger-spans <dir> <run> [capBytes]\n".utf8))
            return 2
        }
        let capBytes = arguments.count > 2 ? Int(arguments[2]) ?? 64 << 20 : 64 << 20
        let writer: LedgerWriter
        do {
            writer = try LedgerWriter(directory: URL(fileURLWithPath: arguments[0]), capBytes: capBytes)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            return 1
        }
        // Bounded so a test that forgets to kill the child does not leave it running forever.
        for sequence in 0..<1_000_000 {
            var event = LedgerEvent(
                kind: .span, name: "crash.span", session: "run-\(runNumber)",
                timestampMs: Int64(realtimeMilliseconds()))
            event.durationMs = 1500.25
            event.budgetMs = 1000
            event.exit = "success"
            event.count = sequence
            event.extra = ["run": .int(Int64(runNumber))]
            do {
                try writer.append(event)
            } catch {
                FileHandle.standardError.write(Data("\(error)\n".utf8))
                return 1
            }
            // Unbuffered: an acknowledgement the parent reads is never ahead of the file.
            let ack = Array("ack \(sequence)\n".utf8)
            guard ack.withUnsafeBytes({ write(1, $0.baseAddress, $0.count) }) == ack.count else { return 1 }
        }
        return 0
    }

    private static func realtimeMilliseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec) / 1_000_000
    }
}
