// The metrics endpoint over real loopback sockets: the answers, the 8 KiB limit, the read
// deadline against a slowloris client, the connection limit, start errors, and stop closing
// every descriptor. The body comes from an injected provider; Perf is not installed here.
import Foundation
import Glibc
import PerfTestSupport
import Testing

@testable import Perf

/// Starts an endpoint on an ephemeral loopback port serving `body`.
func startMetricsEndpoint(
    maxConnections: Int = 4, readTimeout: Duration = .seconds(2), body: String = "perf_test_up 1\n"
) throws -> Perf.MetricsEndpoint {
    var limits = Perf.MetricsEndpoint.Limits()
    limits.maxConnections = maxConnections
    limits.readTimeout = readTimeout
    return try Perf.MetricsEndpoint.start(host: "127.0.0.1", port: 0, limits: limits, body: { body })
}

// Perf.shutdown() stops every endpoint in the process, so suites that start one are serialized
// with the others that install Perf.
extension PerfGlobalStateTests {
    @Suite struct MetricsEndpointTests {
        @Test func answersGetHeadAndEveryErrorOverASocket() throws {
            let endpoint = try startMetricsEndpoint(body: "perf_test_up 1\n")
            defer { endpoint.stop() }
            #expect(endpoint.port > 0 && endpoint.host == "127.0.0.1")
            let get = try #require(try LoopbackHTTP.request(port: endpoint.port))
            #expect(get.status == 200 && get.text == "perf_test_up 1\n")
            #expect(get.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
            #expect(get.headers["connection"] == "close")
            let head = try #require(try LoopbackHTTP.request(port: endpoint.port, method: "HEAD"))
            #expect(head.status == 200 && head.body.isEmpty && head.headers["content-length"] == "15")
            #expect(try LoopbackHTTP.request(port: endpoint.port, path: "/metrics?collect[]=x")?.status == 200)
            #expect(try LoopbackHTTP.request(port: endpoint.port, path: "/")?.status == 404)
            #expect(try LoopbackHTTP.request(port: endpoint.port, path: "/favicon.ico")?.status == 404)
            #expect(try LoopbackHTTP.request(port: endpoint.port, method: "POST")?.status == 405)
            #expect(try LoopbackHTTP.request(port: endpoint.port, method: "DELETE")?.status == 405)
            let cases: [(String, Int)] = [
                ("GET /metrics HTTP/1.0\r\n\r\n", 200), ("GET /metrics HTTP/1.1\r\n\r\n", 400),
                ("garbage\r\n\r\n", 400), ("GET /metrics HTTP/3.0\r\n\r\n", 505),
                ("GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", 200),
            ]
            for (request, status) in cases {
                let (bytes, ending) = try LoopbackHTTP.exchange(port: endpoint.port, Array(request.utf8))
                #expect(ending == .closed, "\(request.debugDescription)")
                #expect(LoopbackHTTPResponse(bytes)?.status == status, "\(request.debugDescription)")
            }
            // Without a half-close too: the answer comes as soon as the head is complete.
            let connection = try LoopbackConnection(port: endpoint.port)
            connection.send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            let (bytes, ending) = connection.readToEnd()
            #expect(ending == .closed && LoopbackHTTPResponse(bytes)?.status == 200)
        }

        @Test func headsOverEightKibibytesGet431AndTheEndpointGoesOn() throws {
            let endpoint = try startMetricsEndpoint()
            defer { endpoint.stop() }
            let filler = String(repeating: "h", count: 8192)
            for request in ["GET /metrics HTTP/1.1\r\nHost: x\r\nX-Huge: \(filler)\r\n\r\n", "GET /\(filler)"] {
                let (bytes, ending) = try LoopbackHTTP.exchange(
                    port: endpoint.port, Array(request.utf8), halfClose: false)
                #expect(ending == .closed)
                #expect(LoopbackHTTPResponse(bytes)?.status == 431)
            }
            // A flood far past the limit: answered (or cut), never buffered.
            let flood = [UInt8](repeating: UInt8(ascii: "A"), count: 1 << 20)
            let (bytes, _) = try LoopbackHTTP.exchange(port: endpoint.port, flood, halfClose: false)
            if !bytes.isEmpty { #expect(LoopbackHTTPResponse(bytes)?.status == 431) }
            #expect(try LoopbackHTTP.request(port: endpoint.port)?.status == 200)
        }

        /// A client that sends a byte at a time is cut at the read deadline; another is served
        /// meanwhile, at once.
        @Test func aSlowlorisClientIsCutAtTheDeadlineWhileAnotherIsServed() throws {
            let endpoint = try startMetricsEndpoint(readTimeout: .milliseconds(600))
            defer { endpoint.stop() }
            let slow = try LoopbackConnection(port: endpoint.port)
            let started = monotonicSeconds()
            var sent = 0
            var served = false
            var cut: Double?
            let request =
                Array("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ".utf8) + [UInt8](repeating: 0x61, count: 8000)
            while cut == nil, monotonicSeconds() - started < 10, sent < request.count {
                guard slow.send([request[sent]]) else {
                    cut = monotonicSeconds() - started
                    break
                }
                sent += 1
                if sent == 5 {
                    #expect(try LoopbackHTTP.request(port: endpoint.port)?.status == 200)
                    // Served while the slow client still holds its connection, unanswered.
                    #expect(!slow.isReadable(timeoutSeconds: 0), "the slow client was cut before the other was served")
                    served = true
                }
                // The pace of the slow client; also notices the server's answer or close.
                if slow.isReadable(timeoutSeconds: 0.02) { cut = monotonicSeconds() - started }
            }
            let (bytes, ending) = slow.readToEnd(timeoutSeconds: 2)
            let after = try #require(cut, "the slow client was never cut (sent \(sent) bytes)")
            #expect(served)
            #expect(after >= 0.55 && after < 2.5, "cut after \(after) s, deadline 0.6 s")
            #expect(ending != .timedOut)
            if !bytes.isEmpty { #expect(LoopbackHTTPResponse(bytes)?.status == 408) }
            #expect(endpoint.counters.timedOut == 1)
            #expect(try LoopbackHTTP.request(port: endpoint.port)?.status == 200)
        }

        /// With every connection slot held by an idle client, a scrape waits in the backlog and is
        /// served once the idle ones are cut; 24 scrapes at once are all served through 4 slots.
        @Test func connectionsBeyondTheLimitWaitAndAreServed() async throws {
            let endpoint = try startMetricsEndpoint(maxConnections: 2, readTimeout: .milliseconds(500))
            defer { endpoint.stop() }
            let idle = try (0..<2).map { _ in try LoopbackConnection(port: endpoint.port) }
            #expect(try await waitUntil(seconds: 5) { endpoint.counters.accepted == 2 })
            let started = monotonicSeconds()
            let waiting = try #require(try LoopbackHTTP.request(port: endpoint.port))
            #expect(waiting.status == 200)
            #expect(monotonicSeconds() - started > 0.2, "served only after an idle client was cut")
            #expect(endpoint.counters.timedOut == 2)
            withExtendedLifetime(idle) {}

            let wide = try startMetricsEndpoint(maxConnections: 4)
            defer { wide.stop() }
            let statuses = try await withThrowingTaskGroup(of: Int?.self) { group in
                for _ in 0..<24 {
                    group.addTask { try LoopbackHTTP.request(port: wide.port, timeoutSeconds: 20)?.status }
                }
                return try await group.reduce(into: [Int?]()) { $0.append($1) }
            }
            #expect(statuses.count == 24 && statuses.allSatisfy { $0 == 200 }, "\(statuses)")
            #expect(wide.counters.accepted == 24 && wide.counters.timedOut == 0)
        }

        /// The body is made on the endpoint's own thread, `perf-metrics`, never on a thread of
        /// the program's (the caller's, Dispatch's or the cooperative pool's).
        @Test func theBodyIsMadeOnTheEndpointsOwnThread() throws {
            let caller = EndpointDescriptors.readWhole("/proc/thread-self/comm")
            let endpoint = try Perf.MetricsEndpoint.start(host: "127.0.0.1", port: 0, limits: .init()) {
                EndpointDescriptors.readWhole("/proc/thread-self/comm")
            }
            defer { endpoint.stop() }
            let threadName = try #require(try LoopbackHTTP.request(port: endpoint.port)).text
            #expect(threadName == "perf-metrics\n" && threadName != caller)
        }

        @Test func startErrorsNameTheAddressAndTheReason() throws {
            let endpoint = try startMetricsEndpoint()
            defer { endpoint.stop() }
            func reason(_ host: String, _ port: Int) -> Perf.MetricsEndpoint.StartError? {
                do {
                    try Perf.MetricsEndpoint.start(host: host, port: port, limits: .init(), body: { "" }).stop()
                    return nil
                } catch { return error }
            }
            let inUse = try #require(reason("127.0.0.1", endpoint.port))
            #expect(inUse.reason == .addressInUse)
            #expect(
                inUse.description.hasPrefix(
                    "perf: cannot serve metrics on 127.0.0.1:\(endpoint.port): the address is in use"))
            #expect(reason("example.com", 9464)?.reason == .badAddress)
            #expect(reason("127.0.0.1", 70_000)?.reason == .badPort)
            #expect(reason("127.0.0.1", -1)?.reason == .badPort)
            #expect(reason("192.0.2.1", 0)?.reason == .addressNotAvailable)  // TEST-NET-1, not this host's
            let loopback6 = reason("::1", 0)  // a host without IPv6 has no ::1
            #expect(loopback6 == nil || loopback6?.reason == .addressNotAvailable)
            #expect(reason("localhost", 0) == nil)
        }

        /// stop() closes the listener (a connect is refused), every connection, the wake pipe, and
        /// joins the thread: none of the endpoint's descriptors are open afterwards.
        @Test func stopClosesTheListenerAndEveryDescriptor() throws {
            let endpoint = try startMetricsEndpoint(readTimeout: .seconds(30))
            let port = endpoint.port
            let idle = try LoopbackConnection(port: port)
            #expect(try LoopbackHTTP.request(port: port)?.status == 200)
            #expect(pollUntil(seconds: 5) { endpoint.counters.accepted == 2 })
            let during = EndpointDescriptors.open()
            #expect(EndpointDescriptors.sockets(port: port, in: during).count >= 2, "listener and the idle connection")
            #expect(endpoint.isRunning)
            endpoint.stop()
            #expect(!endpoint.isRunning)
            endpoint.stop()  // idempotent
            #expect(LoopbackHTTP.connectError(port: port) == ECONNREFUSED)
            #expect(idle.readToEnd(timeoutSeconds: 2).ending != .timedOut, "the idle connection was closed")
            let after = EndpointDescriptors.open()
            #expect(EndpointDescriptors.sockets(port: port, in: after).isEmpty)
            // The listener and the wake pipe, by what they referred to (a number may be reused).
            let own = endpoint.descriptors.compactMap { during[$0] }
            #expect(own.count == 3 && own.filter { $0.hasPrefix("pipe:") }.count == 2, "\(own)")
            #expect(own.allSatisfy { !after.values.contains($0) }, "\(own) still open: \(after)")
        }
    }

}

/// What /proc/self/fd shows, and which sockets are TCP sockets on a given local port.
enum EndpointDescriptors {
    /// Descriptor number → link target (`socket:[123]`, `pipe:[456]`, a path).
    static func open() -> [Int32: String] {
        var links: [Int32: String] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            guard let fd = Int32(name),
                let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)")
            else { continue }
            links[fd] = target
        }
        return links
    }

    /// The descriptors in `descriptors` that are TCP sockets whose local port is `port`.
    static func sockets(port: Int, in descriptors: [Int32: String]) -> [Int32] {
        var inodes: Set<String> = []
        for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
            for line in readWhole(table).split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 9, let colon = fields[1].lastIndex(of: ":"),
                    Int(fields[1][fields[1].index(after: colon)...], radix: 16) == port
                else { continue }
                inodes.insert("socket:[\(fields[9])]")
            }
        }
        return descriptors.filter { inodes.contains($0.value) }.map(\.key)
    }

    /// A /proc file read to its end: Foundation's `String(contentsOfFile:)` stops after the first
    /// page of a file whose size reads as 0.
    static func readWhole(_ path: String) -> String {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { Glibc.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
