// Google Benchmark JSON read as report figures: detection, the aggregate → metric mapping, unit
// conversion, counters, rejected structures, a budget check on the result, and seeded mutations.
import Foundation
import PerfTestSupport
import Testing

@testable import Perf
@testable import PerfReport

@Suite struct GoogleBenchmarkInputTests {
    /// What `--benchmark_format=json --benchmark_repetitions=3` writes (trimmed): iteration
    /// entries, the mean/median/stddev/cv aggregates, a user-defined p99, a counter, an error run.
    static let sample = #"""
        {
          "context": {
            "date": "2026-12-02T17:02:03+00:00", "host_name": "ci-7", "executable": "./bm",
            "num_cpus": 2, "mhz_per_cpu": 2596, "cpu_scaling_enabled": false,
            "caches": [{"type": "Data", "level": 1, "size": 49152, "num_sharing": 1}],
            "load_avg": [0.5, 0.4, 0.3], "library_build_type": "release", "json_schema_version": 1
          },
          "benchmarks": [
            {"name": "BM_Parse/64", "family_index": 0, "per_family_instance_index": 0, "run_name": "BM_Parse/64",
             "run_type": "iteration", "repetitions": 3, "repetition_index": 0, "threads": 1, "iterations": 1000,
             "real_time": 1500, "cpu_time": 1490, "time_unit": "us", "items_per_second": 650000},
            {"name": "BM_Parse/64", "family_index": 0, "per_family_instance_index": 0, "run_name": "BM_Parse/64",
             "run_type": "iteration", "repetitions": 3, "repetition_index": 1, "threads": 1, "iterations": 1000,
             "real_time": 1700, "cpu_time": 1690, "time_unit": "us", "items_per_second": 590000},
            {"name": "BM_Parse/64", "family_index": 0, "per_family_instance_index": 0, "run_name": "BM_Parse/64",
             "run_type": "iteration", "repetitions": 3, "repetition_index": 2, "threads": 1, "iterations": 1000,
             "real_time": 1600, "cpu_time": 1590, "time_unit": "us", "items_per_second": 620000},
            {"name": "BM_Parse/64_mean", "family_index": 0, "per_family_instance_index": 0,
             "run_name": "BM_Parse/64", "run_type": "aggregate", "repetitions": 3, "threads": 1,
             "aggregate_name": "mean", "aggregate_unit": "time", "iterations": 3, "real_time": 1600,
             "cpu_time": 1590, "time_unit": "us", "items_per_second": 620000},
            {"name": "BM_Parse/64_median", "family_index": 0, "per_family_instance_index": 0,
             "run_name": "BM_Parse/64", "run_type": "aggregate", "repetitions": 3, "threads": 1,
             "aggregate_name": "median", "aggregate_unit": "time", "iterations": 3, "real_time": 1600,
             "cpu_time": 1590, "time_unit": "us", "items_per_second": 620000},
            {"name": "BM_Parse/64_p99", "family_index": 0, "per_family_instance_index": 0,
             "run_name": "BM_Parse/64", "run_type": "aggregate", "repetitions": 3, "threads": 1,
             "aggregate_name": "p99", "aggregate_unit": "time", "iterations": 3, "real_time": 1698,
             "cpu_time": 1688, "time_unit": "us", "items_per_second": 591000},
            {"name": "BM_Parse/64_cv", "family_index": 0, "per_family_instance_index": 0,
             "run_name": "BM_Parse/64", "run_type": "aggregate", "repetitions": 3, "threads": 1,
             "aggregate_name": "cv", "aggregate_unit": "percentage", "iterations": 3, "real_time": 0.0625,
             "cpu_time": 0.0625, "time_unit": "us"},
            {"name": "BM_Spin", "family_index": 1, "per_family_instance_index": 0, "run_name": "BM_Spin",
             "run_type": "iteration", "repetitions": 1, "repetition_index": 0, "threads": 1, "iterations": 200,
             "real_time": 2.5, "cpu_time": 2.5, "time_unit": "ms"},
            {"name": "BM_Broken", "family_index": 2, "per_family_instance_index": 0, "run_name": "BM_Broken",
             "run_type": "iteration", "repetitions": 1, "repetition_index": 0, "threads": 1, "iterations": 0,
             "real_time": 0, "cpu_time": 0, "time_unit": "ns", "error_occurred": true, "error_message": "no input"}
          ]
        }
        """#

    static func figures(_ text: String = sample, path: String = "bench.json") throws -> ReportFigures {
        try ReportFigures(bytes: Array(text.utf8), path: path)
    }

    @Test func aggregatesBecomePercentilesInMilliseconds() throws {
        let figures = try Self.figures()
        let parse = try #require(figures.spans["BM_Parse/64"])
        #expect(parse.values[.p50] == 1.6)
        #expect(abs((parse.values[.p99] ?? 0) - 1.698) < 1e-12)
        // The aggregates give p50; the slowest repetition gives max.
        #expect(parse.values[.max] == 1.7)
        #expect(parse.count == 3)
        // The mean is no sum: the file does not say how many calls each repetition timed.
        #expect(parse.values[.sum] == nil)
        #expect(figures.spans.keys.sorted() == ["BM_Parse/64", "BM_Parse/64/items_per_second", "BM_Spin"])
        #expect(figures.path == "bench.json")
    }

    @Test func countersComeFromTheMedianAggregate() throws {
        let counter = try #require(try Self.figures().spans["BM_Parse/64/items_per_second"])
        #expect(counter.values == [.count: 620_000])
    }

    @Test func iterationEntriesStandInWithoutAggregates() throws {
        let spin = try #require(try Self.figures().spans["BM_Spin"])
        #expect(spin.values[.p50] == 2.5)
        #expect(spin.values[.max] == 2.5)
        #expect(spin.count == 1)
    }

    @Test func medianOfSeveralRepetitionsWithoutAggregates() throws {
        let entries = [4000, 1000, 3000, 2000].map { time in
            #"{"name": "BM_X", "run_type": "iteration", "real_time": \#(time), "cpu_time": 1, "time_unit": "ns"}"#
        }
        let text = #"{"context": {}, "benchmarks": [\#(entries.joined(separator: ","))]}"#
        let span = try #require(try Self.figures(text).spans["BM_X"])
        #expect(span.values[.p50] == 0.0025)
        #expect(span.values[.max] == 0.004)
        #expect(span.count == 4)
    }

    @Test func environmentComesFromTheContext() throws {
        let environment = try Self.figures().environment
        #expect(environment == ["buildConfiguration": "release", "cpuModel": "ci-7"])
        let perfBench =
            #"{"context": {"cpu_model": "AMD EPYC", "swift_version": "6.3", "host_name": "h"}, "benchmarks": []}"#
        #expect(try Self.figures(perfBench).environment == ["cpuModel": "AMD EPYC", "swiftVersion": "6.3"])
    }

    @Test func performanceReportsAreNotTakenForBenchmarks() throws {
        let golden = try [UInt8](Data(contentsOf: ReportFixture.golden))
        #expect(!ReportFigures.isGoogleBenchmark(golden))
        let figures = try ReportFigures(bytes: golden, path: "golden.json")
        #expect(!figures.spans.isEmpty)
        // A report whose object merely mentions the key is still read as a report.
        let mentioning = #"{"benchmarks": [], "schema": "perf-report"}"#
        #expect(!ReportFigures.isGoogleBenchmark(Array(mentioning.utf8)))
    }

    @Test(arguments: [
        (#"{"context": {}, "benchmarks": {}}"#, "\"benchmarks\" is not an array"),
        (#"{"context": [], "benchmarks": []}"#, "\"context\" is not an object"),
        (#"{"context": {}, "benchmarks": [3]}"#, "benchmarks[0] is not an object"),
        (#"{"context": {}, "benchmarks": [{"real_time": 1}]}"#, "benchmarks[0] has no \"name\""),
        (
            #"{"context": {}, "benchmarks": [{"name": "a", "real_time": 1}, {"name": "b", "real_time": "1"}]}"#,
            "benchmarks[1].real_time is not a non-negative number"
        ),
        (
            #"{"context": {}, "benchmarks": [{"name": "a", "real_time": 1, "time_unit": "fortnights"}]}"#,
            "benchmarks[0].time_unit 'fortnights' is not ns, us, ms or s"
        ),
    ])
    func malformedFilesAreRejectedNamingTheFileAndTheEntry(text: String, problem: String) {
        #expect {
            try Self.figures(text, path: "out/bench.json")
        } throws: { error in
            guard let error = error as? Perf.ReportError else { return false }
            return error.code == .invalidReport && error.path == "out/bench.json"
                && error.description
                    == "cannot read report 'out/bench.json': not valid Google Benchmark JSON: \(problem)"
        }
    }

    @Test func budgetsCheckTheBenchmarksLikeSpans() throws {
        let figures = try Self.figures()
        let budgets = try BudgetFixture.budgets(
            #"""
            {"version": 1, "defaults": {"minSamples": 1},
             "spans": [{"match": "BM_Parse/64", "limits": {"p50": {"max": "2ms"}, "p99": {"max": "1.5ms"}}},
                       {"match": "*/items_per_second", "limits": {"count": {"min": 600000}}},
                       {"match": "BM_Broken", "limits": {"count": {"min": 1}}}]}
            """#)
        let verdict = try BudgetCheck(budgets: budgets).run(current: figures)
        #expect(BudgetFixture.check(verdict, "BM_Parse/64", "p50")?.status == .pass)
        #expect(BudgetFixture.check(verdict, "BM_Parse/64", "p99")?.status == .fail)
        #expect(BudgetFixture.check(verdict, "BM_Parse/64/items_per_second", "count")?.status == .pass)
        // The run that errored is missing, and a budgeted missing run fails the check.
        #expect(verdict.checks.contains { $0.subject == "BM_Broken" && $0.kind == .presence })
        #expect(verdict.exitCode != 0)
    }

    @Test func mutatedFilesNeverCrashTheReader() {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        let sample = Array(Self.sample.utf8)
        var read = 0
        var rejected = 0
        for _ in 0..<400 {
            do {
                let figures = try ReportFigures(
                    bytes: ReportFuzzTests.mutate(sample, using: &random), path: "fuzz.json")
                for span in figures.spans.values { _ = span.count }
                read += 1
            } catch {
                #expect(error.path == "fuzz.json", "seed \(seed)")
                rejected += 1
            }
        }
        #expect(read > 0 && rejected > 0, "seed \(seed): \(read) read, \(rejected) rejected")
    }
}
