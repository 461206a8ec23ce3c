// `perf-test-child span-memory <dir> <threads>`: a service whose span histograms and flight
// recorder live in span memory, for tests that SIGKILL it at a random moment.
//
// It opens the keyed span `child.open` (left open, so recovery orphans it), then each of
// `threads` threads ends `mem.span` spans in a loop and acknowledges each on stdout after `end()`
// returned, as `<thread> <index>`. A span's budget encodes who ended it:
// `1_000_000 + thread * 100_000 + index` ms (under budget, so no ledger line: the span memory is
// the only record of it), so a reader of the recovered flight recorder knows which spans it holds.
import Foundation
import Glibc
import Perf
import PerfTestSupport

enum SpanMemoryChild {
    static let spanName = "mem.span"
    static let ringCapacity = SpanMemoryProtocol.ringCapacity

    static func run(_ arguments: [String]) -> Int32 {
        guard arguments.count == 2, let threads = Int(arguments[1]), (1...8).contains(threads) else {
            FileHandle.standardError.write(Data("usage: perf-test-child span-memory <dir> <threads 1-8>\n".utf8))
            return 2
        }
        Perf.install(
            Perf.Configuration(
                directory: URL(fileURLWithPath: arguments[0]),
                app: Perf.AppInfo(name: "span-memory-child", version: "1"),
                recording: .enabled, diagnosticsIntervalSeconds: 0, flightRecorderCapacity: ringCapacity,
                spanMemoryBytes: 4 << 20, spanNameCapacity: 64))
        Perf.begin(key: "open-1", "child.open", slowMs: 60_000)
        for thread in 0..<threads {
            Thread.detachNewThread {
                // Bounded so a test that forgets to kill the child does not leave it running forever.
                for index in 0..<99_999 {
                    let span = Perf.begin("mem.span", slowMs: SpanMemoryProtocol.budgetMs(thread: thread, index: index))
                    span.end()
                    guard acknowledge("\(thread) \(index)\n") else { break }
                }
            }
        }
        while true { pause() }
    }

    /// Unbuffered: an acknowledgement the parent reads is never ahead of the memory.
    @discardableResult
    private static func acknowledge(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) } == bytes.count
    }
}
