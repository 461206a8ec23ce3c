// The metrics endpoint with the process-global Perf: Perf.shutdown() stops every endpoint, and
// the public start serves the live exposition.
import Foundation
import Glibc
import PerfTestSupport
import Testing

@testable import Perf

extension PerfGlobalStateTests {
    @Suite struct MetricsEndpointShutdownTests {
        @Test func shutdownStopsEveryEndpoint() throws {
            let directory = try TemporaryDirectory("metrics-shutdown")
            defer { directory.remove() }
            Perf.install(
                Perf.Configuration(directory: directory.url, app: Perf.AppInfo(name: "metrics"), recording: .enabled))
            defer { Perf.shutdown() }
            let first = try startMetricsEndpoint()
            let second = try Perf.MetricsEndpoint.start(host: "127.0.0.1", port: 0)
            #expect(try LoopbackHTTP.request(port: first.port)?.status == 200)
            let served = try #require(try LoopbackHTTP.request(port: second.port))
            #expect(
                served.status == 200 && served.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
            Perf.begin("metrics.served", slowMs: nil).end()
            // The public endpoint serves the live exposition, as the process has it now.
            let live = try #require(try LoopbackHTTP.request(port: second.port)).text
            #expect(live.contains("perf_app_info{app=\"metrics\""), "\(live.prefix(300))")
            #expect(live.contains("perf_span_duration_seconds_count{app=\"metrics\",span=\"metrics.served\"} 1"))
            Perf.shutdown()
            #expect(!first.isRunning && !second.isRunning)
            #expect(LoopbackHTTP.connectError(port: first.port) == ECONNREFUSED)
            #expect(LoopbackHTTP.connectError(port: second.port) == ECONNREFUSED)
            #expect(EndpointDescriptors.sockets(port: first.port, in: EndpointDescriptors.open()).isEmpty)
        }

        @Test func nothingListensUnlessStarted() throws {
            let directory = try TemporaryDirectory("metrics-unstarted")
            defer { directory.remove() }
            let before = EndpointDescriptors.open().values.filter { $0.hasPrefix("socket:") }.count
            Perf.install(
                Perf.Configuration(directory: directory.url, app: Perf.AppInfo(name: "metrics"), recording: .enabled))
            defer { Perf.shutdown() }
            Perf.begin("metrics.unstarted", slowMs: nil).end()
            #expect(EndpointDescriptors.sockets(port: 9464, in: EndpointDescriptors.open()).isEmpty)
            let during = EndpointDescriptors.open().values.filter { $0.hasPrefix("socket:") }.count
            #expect(during <= before, "install opened a socket")
        }
    }
}
