// `perf-test-child span-names <dir>`: ends spans of 24 names, twice each, into span memory with
// room for 16: the ends of the 8 names past it are counted, and the first is said once on stderr.
import Foundation
import Perf

enum SpanNamesChild {
    static let names: [StaticString] = [
        "names.00", "names.01", "names.02", "names.03", "names.04", "names.05", "names.06", "names.07",
        "names.08", "names.09", "names.10", "names.11", "names.12", "names.13", "names.14", "names.15",
        "names.16", "names.17", "names.18", "names.19", "names.20", "names.21", "names.22", "names.23",
    ]

    static func run(_ arguments: [String]) -> Int32 {
        guard let directory = arguments.first else { return 2 }
        var configuration = Perf.Configuration(
            directory: URL(fileURLWithPath: directory), app: Perf.AppInfo(name: "span-names", version: "1"),
            recording: .enabled)
        configuration.spanNameCapacity = 16
        Perf.install(configuration)
        for _ in 0..<2 {
            for name in names { Perf.begin(name, slowMs: 60_000).end() }
        }
        Perf.shutdown()
        print("done")
        return 0
    }
}
