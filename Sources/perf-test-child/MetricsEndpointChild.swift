// `perf-test-child metrics-endpoint <dir>`: a program scraped by a real Prometheus
// (scripts/validate-prometheus-scrape.sh). Installs Perf on <dir> with a manual clock, ends 1,000
// spans `metrics.request` of known durations (log-uniform from 1 ms to 40 ms, so p95 is 33 ms),
// starts the public metrics endpoint (serving Perf.prometheusText()) on 127.0.0.1, port 0, and prints
//   port <n>
//   p95 <seconds>            Perf's own p95 of metrics.request (Perf.spanHistograms())
//   bounds <le,le,...>       the exposition's bucket bounds, in seconds
//   ready
// Then ends one span `metrics.tick` every 100 ms (so counters grow between scrapes) until stdin
// closes, shuts Perf down and exits 0.
// `fdLimit` (a test's): after the endpoint starts, every free descriptor number under a lowered
// RLIMIT_NOFILE is filled but one, so its second concurrent accept fails with EMFILE; SIGUSR1 closes
// the fillers (anything else in the process, a lazily made Dispatch timer descriptor say, may take
// the one free number for good, so the test frees descriptors itself rather than rely on the
// endpoint's own closing) and prints `released <count>`. `readTimeoutMs=<ms>` shortens the endpoint's
// read deadline.
import Foundation
import Glibc
import Perf
import PerfCore
import Synchronization

/// Set by SIGUSR1 in `fdLimit` mode: the ticker thread then closes the descriptor fillers.
let releaseFillers = Atomic<Bool>(false)

enum MetricsEndpointChild {
    static let requestSpans = 1_000
    /// The `le` bounds of `Perf.prometheusText()` and `perf-report export --format prometheus`.
    static let bounds = PrometheusText.bounds.map(\.text)

    static func run(_ arguments: [String]) -> Int32 {
        guard let path = arguments.first else {
            FileHandle.standardError.write(Data("usage: perf-test-child metrics-endpoint <dir>\n".utf8))
            return 2
        }
        let clock = ManualClock()
        Perf.install(
            Perf.Configuration(
                directory: URL(fileURLWithPath: path), app: Perf.AppInfo(name: "metrics-child", version: "1"),
                recording: .enabled),
            environment: [:], clock: clock, report: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) })
        for index in 0..<requestSpans {
            let span = Perf.begin("metrics.request", slowMs: 30)
            let fraction = Double(index) / Double(requestSpans - 1)
            clock.advance(byNanos: UInt64(1_000_000 * pow(40, fraction)))
            span.end()
        }
        let readTimeoutMs = arguments.dropFirst().compactMap {
            $0.hasPrefix("readTimeoutMs=") ? Int($0.dropFirst(14)) : nil
        }.first
        let endpoint: Perf.MetricsEndpoint
        do {
            if let readTimeoutMs {
                var limits = Perf.MetricsEndpoint.Limits()
                limits.readTimeout = .milliseconds(readTimeoutMs)
                endpoint = try Perf.MetricsEndpoint.start(host: "127.0.0.1", port: 0, limits: limits) {
                    Perf.prometheusText()
                }
            } else {
                endpoint = try start()
            }
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            return 1
        }
        let fillers = arguments.contains("fdLimit") ? leaveOneDescriptor() : []
        if !fillers.isEmpty { signal(SIGUSR1) { _ in releaseFillers.store(true, ordering: .relaxed) } }
        let p95 = Perf.spanHistograms()["metrics.request"]?.quantile(0.95) ?? 0
        WatchdogCrashChild.emit("port \(endpoint.port)")
        WatchdogCrashChild.emit("p95 \(Double(p95) / 1e9)")
        WatchdogCrashChild.emit("bounds \(bounds.joined(separator: ","))")
        WatchdogCrashChild.emit("ready")
        let ticker = Thread {
            var fillersOpen = !fillers.isEmpty
            while true {
                if fillersOpen, releaseFillers.load(ordering: .relaxed) {
                    for fd in fillers { close(fd) }
                    fillersOpen = false
                    WatchdogCrashChild.emit("released \(fillers.count)")
                }
                Perf.begin("metrics.tick", slowMs: 0).end()
                usleep(100_000)  // the workload's pace, not a synchronisation
            }
        }
        ticker.start()
        while !FileHandle.standardInput.availableData.isEmpty {}
        Perf.shutdown()
        return endpoint.isRunning ? 1 : 0
    }

    /// Lowers RLIMIT_NOFILE just above the highest open descriptor and fills every free number
    /// below it with /dev/null, then frees one: the next descriptor opened gets it, the one after
    /// fails with EMFILE. Returns the fillers still open.
    static func leaveOneDescriptor() -> [Int32] {
        let numbers = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap {
            Int32($0)
        }
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = rlim_t((numbers.max() ?? 64) + 2)
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        var fillers: [Int32] = []
        fillers.reserveCapacity(64)
        while true {
            let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { break }
            fillers.append(fd)
        }
        if let last = fillers.popLast() { close(last) }
        return fillers
    }

    /// The endpoint as a service starts it: serving `Perf.prometheusText()`.
    static func start() throws -> Perf.MetricsEndpoint {
        try Perf.MetricsEndpoint.start(host: "127.0.0.1", port: 0)
    }
}
