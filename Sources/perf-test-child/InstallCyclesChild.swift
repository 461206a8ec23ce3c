// `perf-test-child install-cycles <directory|-> <cycles>`: installs and shuts Perf down <cycles>
// times (recording into <directory>, or in memory only with `-`), ending under- and over-budget
// spans in each, and prints `rss <cycle> <bytes>` after the first cycle, at the half and at the
// end, then `freed <runtimes>` and `kept <runtimes>`: what the install/shutdown leak test reads.
import Foundation
import Perf

enum InstallCyclesChild {
    static func run(_ arguments: [String]) -> Int32 {
        guard arguments.count == 2, let cycles = Int(arguments[1]), cycles >= 2 else { return 2 }
        let directory = arguments[0] == "-" ? nil : URL(fileURLWithPath: arguments[0])
        let configuration = Perf.Configuration(
            directory: directory, app: Perf.AppInfo(name: "install-cycles", version: "1"),
            recording: directory == nil ? .disabled : .enabled)
        for cycle in 1...cycles {
            Perf.install(configuration)
            for _ in 0..<100 { Perf.begin("cycles.fast", slowMs: 60_000).end() }
            Perf.begin("cycles.slow", slowMs: 0).end(detail: "/v1/cycle", count: cycle)
            Perf.shutdown()
            if cycle == 1 || cycle == cycles / 2 || cycle == cycles {
                print("rss \(cycle) \(LivePrometheus.residentMemoryBytes() ?? 0)")
            }
        }
        let counts = Perf.retiredRuntimeCounts()
        print("freed \(counts.freed)")
        print("kept \(counts.kept)")
        return 0
    }
}
