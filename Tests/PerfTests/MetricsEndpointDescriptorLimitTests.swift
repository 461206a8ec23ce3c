// The metrics endpoint out of descriptors: a child whose RLIMIT_NOFILE leaves it one free
// descriptor gets more connections than it can accept. accept(2) fails with EMFILE while the
// listener stays readable; the endpoint must not spin on it, and must serve again once
// descriptors are free (the child frees them on SIGUSR1: relying on the endpoint's own closing
// failed in a clean-clone CI run, where something else in the process took the freed number).
import Foundation
import Glibc
import PerfTestSupport
import Testing

@Suite struct MetricsEndpointDescriptorLimitTests {
    /// User plus system CPU time of `pid`, in seconds (/proc/<pid>/stat fields 14 and 15).
    static func cpuSeconds(_ pid: pid_t) -> Double {
        let stat = EndpointDescriptors.readWhole("/proc/\(pid)/stat")
        guard let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Each thread of `pid` as `name:state:wchan`, and the count of its open descriptors: what a
    /// failure message needs to say where the child was stuck.
    static func threads(_ pid: pid_t) -> String {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        let described = tasks.sorted().map { tid -> String in
            let stat = EndpointDescriptors.readWhole("/proc/\(pid)/task/\(tid)/stat")
            let name = EndpointDescriptors.readWhole("/proc/\(pid)/task/\(tid)/comm")
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let state = stat.lastIndex(of: ")").map { String(stat[stat.index($0, offsetBy: 2)]) } ?? "?"
            let wchan = EndpointDescriptors.readWhole("/proc/\(pid)/task/\(tid)/wchan")
            return "\(name):\(state):\(wchan)"
        }
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"))?.count ?? -1
        return described.joined(separator: ", ") + "; \(descriptors) descriptors open"
    }

    @Test func outOfDescriptorsTheEndpointWaitsInsteadOfSpinningAndRecovers() throws {
        let directory = try TemporaryDirectory("metrics-emfile")
        defer { directory.remove() }
        let child = try ChildProcess(
            executable: BuildProducts.testChild,
            arguments: ["metrics-endpoint", directory.path, "fdLimit", "readTimeoutMs=700"], withStandardInput: true)
        defer { child.killAndWait() }
        let lines = try #require(child.readLines(until: { $0 == "ready" }, timeoutSeconds: 30))
        let port = try #require(lines.first { $0.hasPrefix("port ") }.flatMap { Int($0.dropFirst(5)) })
        // Four idle clients: the first takes the last descriptor, the others wait on EMFILE.
        let idle = try (0..<4).map { _ in try LoopbackConnection(port: port) }
        let cpuBefore = Self.cpuSeconds(child.pid)
        let wallBefore = monotonicSeconds()
        #expect(!idle[1].isReadable(timeoutSeconds: 0.5), "no descriptor, so no answer yet")
        let cpu = Self.cpuSeconds(child.pid) - cpuBefore
        let wall = monotonicSeconds() - wallBefore
        #expect(cpu < wall * 0.15, "the endpoint's thread spun: \(cpu) s of CPU in \(wall) s")
        // Descriptors come back (the child closes its fillers): the endpoint, backing off on
        // EMFILE, accepts the waiting clients again; each is answered (408) or closed at its
        // deadline, and then a scrape is served.
        child.send(SIGUSR1)
        // The child says when its fillers are closed: a failure below is then the endpoint's.
        try #require(
            child.readLines(until: { $0.hasPrefix("released ") }, timeoutSeconds: 20) != nil,
            "the child never closed its fillers; its threads: \(Self.threads(child.pid))")
        for (index, connection) in idle.enumerated() {
            #expect(
                connection.readToEnd(timeoutSeconds: 10).ending != .timedOut,
                "client \(index) got no answer; the child's threads: \(Self.threads(child.pid))")
        }
        let response = try #require(
            try LoopbackHTTP.request(port: port, timeoutSeconds: 10),
            "no scrape served; the child's threads: \(Self.threads(child.pid))")
        #expect(response.status == 200 && response.text.contains("perf_span_duration_seconds_bucket"))
        child.closeStandardInput()
        #expect(ChildProcess.exitCode(child.wait()) == 0)
    }
}
