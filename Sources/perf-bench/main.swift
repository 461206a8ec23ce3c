// perf-bench: benchmarks measured beside their physical baselines, and nothing else. The reliability
// scenarios are `perf-reliability`; the children tests and scenarios kill are `perf-test-child`.
import Foundation

// Hidden: a child process of the span-memory group's RSS rows (it measures one variant and exits).
if CommandLine.arguments.count > 1, CommandLine.arguments[1] == SpanMemoryRSS.childCommand {
    SpanMemoryRSS.child(Array(CommandLine.arguments.dropFirst(2)))
}
// Hidden: a child process of the ledger group's rows with several processes on one directory.
if CommandLine.arguments.count > 1, CommandLine.arguments[1] == LedgerShared.childCommand {
    LedgerShared.child(Array(CommandLine.arguments.dropFirst(2)))
}

let groups: [BenchGroup] = [
    JournalBenchmarks.group,
    HistogramBenchmarks.group,
    ClockBenchmarks.group,
    SpanBenchmarks.group,
    SpanMemoryBenchmarks.group,
    LedgerBenchmarks.group,
    FacadeBenchmarks.group,
    WatchdogBenchmarks.group,
    SamplerBenchmarks.group,
    ReportBenchmarks.group,
    MetricsBenchmarks.group,
    StallBenchmarks.group,
    BurstBenchmarks.group,
]

let usage = """
    OVERVIEW: Perf's benchmarks, each figure beside its baseline measured in the same run.

    USAGE: perf-bench [--quick] [--only <group>] [--json <file>] [--markdown <file>] [--gbench <file>]

    OPTIONS:
      --quick                 Fewer iterations; finishes in under a minute.
      --only <group>          Run one group (\(groups.map(\.name).joined(separator: ", "))).
      --json <file>           Write the rows as JSON (default Reports/BENCHMARKS.json on a full run).
      --markdown <file>       Write the rows as Markdown (default Reports/BENCHMARKS.md on a full run).
      --gbench <file>         Write the rows as Google Benchmark JSON (--benchmark_format=json), for
                              compare.py and `perf-report check` (default Reports/BENCHMARKS.gbench.json
                              on a full run).
      -h, --help              Show help information.

    """

var arguments = Array(CommandLine.arguments.dropFirst())
var quick = false
var only: String?
var jsonPath: String?
var markdownPath: String?
var gbenchPath: String?
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    switch argument {
    case "--quick": quick = true
    case "--only" where !arguments.isEmpty: only = arguments.removeFirst()
    case "--json" where !arguments.isEmpty: jsonPath = arguments.removeFirst()
    case "--markdown" where !arguments.isEmpty: markdownPath = arguments.removeFirst()
    case "--gbench" where !arguments.isEmpty: gbenchPath = arguments.removeFirst()
    case "-h", "--help":
        print(usage, terminator: "")
        exit(0)
    default:
        FileHandle.standardError.write(Data("Error: unexpected argument '\(argument)'\n\n\(usage)".utf8))
        exit(2)
    }
}
if only == nil && !quick {
    jsonPath = jsonPath ?? "Reports/BENCHMARKS.json"
    markdownPath = markdownPath ?? "Reports/BENCHMARKS.md"
    gbenchPath = gbenchPath ?? "Reports/BENCHMARKS.gbench.json"
}

let runStart = Bench.now()
let context = BenchContext(quick: quick)
for group in groups where only == nil || only == group.name {
    FileHandle.standardError.write(Data("perf-bench: \(group.name)\n".utf8))
    do {
        try group.run(context)
    } catch {
        FileHandle.standardError.write(Data("perf-bench: \(group.name) failed: \(error)\n".utf8))
        exit(1)
    }
}

// scripts/bench.sh names itself (and the quick run it timed first) through the environment.
let variables = ProcessInfo.processInfo.environment
let command =
    variables["PERF_BENCH_COMMAND"]
    ?? (["swift run -c release perf-bench"] + CommandLine.arguments.dropFirst()).joined(separator: " ")
let document = BenchDocument(
    environment: .current(command: command), rows: context.rows, quick: quick,
    wallSeconds: Double(Bench.now() - runStart) / 1e9,
    quickWallSeconds: variables["PERF_BENCH_QUICK_SECONDS"].flatMap(Double.init))
do {
    if let jsonPath { try BenchReportWriter.writeJSON(document, to: jsonPath) }
    if let markdownPath { try BenchReportWriter.writeMarkdown(document, to: markdownPath) }
    if let gbenchPath { try GoogleBenchmarkWriter.write(document, to: gbenchPath) }
} catch {
    FileHandle.standardError.write(Data("perf-bench: cannot write the report: \(error)\n".utf8))
    exit(1)
}
