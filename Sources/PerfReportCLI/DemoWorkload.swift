// The demo's instrumented sample workload: what a user sees Perf catch in a few seconds.
import Dispatch
import Foundation
import Glibc
import Perf

/// A small program's worth of work: page fetches within budget, frame renders that overrun
/// theirs, a reconnect storm, and one feed parse that blocks its queue for ~400 ms.
enum DemoWorkload {
    /// Fetches that stay within their 25 ms budget, except every eighth one, whose query waits
    /// 80 ms for a slow database: each fetch's query and decode are its children, so the slow
    /// fetch's line says where its time went (`children`, `selfMs`), and the span sampler, which
    /// reads the thread every 10 ms once the fetch is past its budget, says what it waited on
    /// (`profile`: the socket read, its peer, and the function that made it).
    static func fetchPages() {
        let database = SlowDatabase()
        defer { database?.close() }
        for index in 0..<24 {
            Perf.measure("demo.fetchPage", slowMs: 25) {
                Perf.measure("demo.db.query", slowMs: 20) {
                    let milliseconds = index % 8 == 7 ? 80 : 2
                    if let database {
                        database.query(milliseconds: milliseconds)
                    } else {
                        work(milliseconds: milliseconds)
                    }
                }
                for _ in 0..<2 { Perf.measure("demo.decode", slowMs: 10) { work(milliseconds: 1) } }
                work(milliseconds: index % 8 == 7 ? 4 : 1)
            }
        }
    }

    /// A database on a loopback socket that answers each request after the milliseconds it
    /// names: the query blocks in a `read`, as a real one does.
    final class SlowDatabase {
        private let connection: Int32

        init?() {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard listener >= 0 else { return nil }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let listening = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(listener, $0, length) == 0 && listen(listener, 1) == 0
                        && getsockname(listener, $0, &length) == 0
                }
            }
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            let connected =
                listening && client >= 0
                && withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) == 0 }
                }
            let server = connected ? accept(listener, nil, nil) : -1
            Glibc.close(listener)
            guard server >= 0 else {
                if client >= 0 { Glibc.close(client) }
                return nil
            }
            connection = client
            Thread {
                var request: UInt8 = 0
                while read(server, &request, 1) == 1 {
                    usleep(useconds_t(request) * 1000)
                    _ = write(server, &request, 1)
                }
                Glibc.close(server)
            }.start()
        }

        /// Sends one query and waits for its answer.
        @inline(never)
        func query(milliseconds: Int) {
            var request = UInt8(clamping: milliseconds)
            guard write(connection, &request, 1) == 1 else { return }
            _ = read(connection, &request, 1)
        }

        func close() { Glibc.close(connection) }
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
