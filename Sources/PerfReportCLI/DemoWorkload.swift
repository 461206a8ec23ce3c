// The demo's instrumented sample workload: what a user sees Perf catch in a few seconds.
import Dispatch
import Foundation
import Perf

/// A small program's worth of work: page fetches within budget, frame renders that overrun
/// theirs, a reconnect storm, and one feed parse that blocks its queue for ~400 ms.
enum DemoWorkload {
    /// Fetches that stay within their 25 ms budget, except every eighth one, whose query is slow:
    /// each fetch's query and decode are its children, so the slow fetch's line says where its
    /// time went (`children`, `selfMs`).
    static func fetchPages() {
        for index in 0..<24 {
            Perf.measure("demo.fetchPage", slowMs: 25) {
                Perf.measure("demo.db.query", slowMs: 20) { work(milliseconds: index % 8 == 7 ? 24 : 2) }
                for _ in 0..<2 { Perf.measure("demo.decode", slowMs: 10) { work(milliseconds: 1) } }
                work(milliseconds: index % 8 == 7 ? 4 : 1)
            }
        }
    }

    /// Renders with an 8 ms budget, a third of them over it.
    static func renderFrames() {
        for index in 0..<30 {
            let span = Perf.begin("demo.renderFrame", slowMs: 8)
            work(milliseconds: index % 3 == 0 ? 11 : 2)
            span.end(detail: "https://example.com/frames/\(index % 4)?token=secret", count: index)
        }
    }

    /// The feed the hang parses, with the user, host and token a ledger must never hold.
    static let feedURL = "https://reader:hunter2@feeds.example.com/v2/feeds/huge?token=secret"

    /// The name of the storm's notes.
    static let stormNote: StaticString = "demo.socket.reconnect"

    /// A burst of the same note: the 30 s floor writes the first and counts the rest, and the
    /// count reaches the ledger at shutdown.
    static func reconnectStorm() -> Int {
        let storm = 500
        for _ in 0..<storm { Perf.note(stormNote) }
        return storm
    }

    /// Blocks its thread for ~400 ms: the hang the watchdog catches and blames on this function.
    /// The loop is written out here rather than calling ``work(milliseconds:)`` so the innermost
    /// frame of our own code in every sample, the culprit, is this function.
    @inline(never)
    static func parseHugeFeed() {
        let end = DispatchTime.now().uptimeNanoseconds + 400_000_000
        var accumulator: UInt64 = 0
        while DispatchTime.now().uptimeNanoseconds < end { accumulator &+= 1 }
        blackHole(accumulator)
    }

    /// Spins for `milliseconds` of wall time, as CPU-bound work does (a sleep would not show in
    /// the stack as the work itself).
    @inline(never)
    static func work(milliseconds: Int) {
        let end = DispatchTime.now().uptimeNanoseconds + UInt64(milliseconds) * 1_000_000
        var accumulator: UInt64 = 0
        while DispatchTime.now().uptimeNanoseconds < end { accumulator &+= 1 }
        blackHole(accumulator)
    }

    @inline(never)
    static func blackHole(_ value: UInt64) {
        if value == .max { FileHandle.standardError.write(Data()) }
    }
}
