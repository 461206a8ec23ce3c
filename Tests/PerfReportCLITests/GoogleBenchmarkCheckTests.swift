// perf-bench's Google Benchmark JSON, checked with the real binaries: the structure Google
// Benchmark's tools read, then `perf-report check` and `compare` on it with budgets files that
// pass, breach, miss a figure, and a malformed file.
import Foundation
import PerfTestSupport
import Testing

@Suite struct GoogleBenchmarkCheckTests {
    /// `perf-bench`, a dependency of this target, built beside the test bundle like `perf-report`.
    static let perfBench = URL(fileURLWithPath: BuildProducts.executable("perf-bench"))

    /// A quick run of the cheapest group (a few seconds in a debug build).
    struct Run {
        let directory: URL
        let gbench: URL
        let rows: [String]

        init(in directory: URL) throws {
            self.directory = directory
            gbench = directory.appendingPathComponent("bench.gbench.json")
            let json = directory.appendingPathComponent("bench.json")
            let log = directory.appendingPathComponent("perf-bench.log")
            try Data().write(to: log)
            let process = Process()
            process.executableURL = GoogleBenchmarkCheckTests.perfBench
            process.arguments = ["--quick", "--only", "histogram", "--gbench", gbench.path, "--json", json.path]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = try FileHandle(forWritingTo: log)
            try process.run()
            process.waitUntilExit()
            let status = process.terminationStatus
            #expect(status == 0, "perf-bench: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
            let document = try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any]
            rows = (document?["rows"] as? [[String: Any]] ?? []).map {
                "\($0["group"] as? String ?? "")/\($0["name"] as? String ?? "")"
            }
        }
    }

    /// One perf-bench run, then everything the gate does with its output.
    @Test func perfBenchOutputThroughCheckAndCompare() throws {
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try Run(in: directory)
        try structureIsGoogleBenchmarks(run)
        try checkPassesOnPresentFiguresAndZeroAllocations(run)
        try anAllocationBreachesTheBudget(run)
        try aMissingFigureIsIncompleteData(run)
        try compareReadsBenchmarkFilesToo(run)
    }

    static func check(_ budgets: String, _ run: Run, name: String) throws -> (String, String, Int32) {
        let file = run.directory.appendingPathComponent(name)
        try Data(budgets.utf8).write(to: file)
        return try CLIFixture.runBinary(
            ["check", run.gbench.path, "--budgets", file.path, "--format", "json"], in: run.directory)
    }

    func structureIsGoogleBenchmarks(_ run: Run) throws {
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: run.gbench)) as? [String: Any])
        let context = try #require(object["context"] as? [String: Any])
        for key in ["date", "host_name", "executable", "library_build_type"] {
            #expect(context[key] is String, "context.\(key)")
        }
        // perf-bench is built as the tests are.
        #if DEBUG
            let configuration = "debug"
        #else
            let configuration = "release"
        #endif
        #expect(context["library_build_type"] as? String == configuration)
        for key in ["num_cpus", "mhz_per_cpu"] { #expect(context[key] is Int, "context.\(key)") }
        #expect(context["caches"] is [Any] && context["load_avg"] is [Any])
        let benchmarks = try #require(object["benchmarks"] as? [[String: Any]])
        var runs = Set<String>()
        for entry in benchmarks {
            let name = try #require(entry["name"] as? String)
            let runName = try #require(entry["run_name"] as? String)
            let aggregate = try #require(entry["aggregate_name"] as? String)
            runs.insert(runName)
            #expect(name == "\(runName)_\(aggregate)")
            #expect(entry["run_type"] as? String == "aggregate")
            for key in ["family_index", "per_family_instance_index", "repetitions", "threads", "iterations"] {
                #expect((entry[key] as? Int).map { $0 >= 0 } == true, "\(name).\(key)")
            }
            if let unit = entry["time_unit"] as? String {
                #expect(["ns", "us", "ms", "s"].contains(unit))
                #expect(entry["real_time"] is Double && entry["cpu_time"] is Double, "\(name)")
                #expect(entry["aggregate_unit"] as? String == "time")
            } else {
                // Allocation counts are counters, never times.
                #expect(entry["real_time"] == nil && entry["cpu_time"] == nil && entry["aggregate_unit"] == nil)
            }
        }
        #expect(!run.rows.isEmpty)
        #expect(Set(run.rows).isSubset(of: runs), "every row is a run")
        #expect(benchmarks.contains { ($0["allocs_per_op"] as? Double) == 0 })
    }

    func checkPassesOnPresentFiguresAndZeroAllocations(_ run: Run) throws {
        let presence = run.rows.map { #"{"match": "\#($0)", "limits": {"count": {"min": 1}}}"# }
        let budgets = #"""
            {"version": 1, "defaults": {"minSamples": 1},
             "spans": [\#(presence.joined(separator: ",")),
                       {"match": "*/allocs_per_op", "limits": {"count": {"max": 0}}}]}
            """#
        let (out, err, status) = try Self.check(budgets, run, name: "pass.json")
        #expect(status == 0, "\(err)\(out)")
        #expect(out.contains(#""verdict":"pass""#))
        #expect(out.contains("histogram/registry record allocations/allocs_per_op"))
    }

    /// The histogram's first record allocates its counters (once in release, more in debug).
    func anAllocationBreachesTheBudget(_ run: Run) throws {
        let budgets = #"""
            {"version": 1, "spans": [{"match": "histogram/LatencyHistogram first record allocations/allocs",
                                      "limits": {"count": {"max": 0}}}]}
            """#
        let (out, err, status) = try Self.check(budgets, run, name: "breach.json")
        #expect(status == 1, "\(err)\(out)")
        #expect(out.contains(#""verdict":"fail""#))
    }

    func aMissingFigureIsIncompleteData(_ run: Run) throws {
        let budgets =
            #"{"version": 1, "spans": [{"match": "histogram/no such figure", "limits": {"count": {"min": 1}}}]}"#
        let (out, err, status) = try Self.check(budgets, run, name: "missing.json")
        #expect(status == 4, "\(err)\(out)")
    }

    func compareReadsBenchmarkFilesToo(_ run: Run) throws {
        let (out, err, status) = try CLIFixture.runBinary(
            ["compare", run.gbench.path, run.gbench.path, "--format", "json"], in: run.directory)
        #expect(status == 0, "\(err)\(out)")
        #expect(out.contains("histogram/registry record, 1 thread"))
    }

    @Test func aMalformedBenchmarkFileIsInvalidInputNamingTheFile() throws {
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(#"{"context": {}, "benchmarks": [{"real_time": 1}]}"#.utf8)
            .write(to: directory.appendingPathComponent("bad.json"))
        try Data(#"{"version": 1, "spans": []}"#.utf8).write(to: directory.appendingPathComponent("b.json"))
        let (_, err, status) = try CLIFixture.runBinary(["check", "bad.json", "--budgets", "b.json"], in: directory)
        #expect(status == 3)
        #expect(err.hasPrefix("perf-report: cannot read report '"))
        #expect(err.hasSuffix("/bad.json': not valid Google Benchmark JSON: benchmarks[0] has no \"name\"\n"))
    }
}
