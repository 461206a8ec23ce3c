// The `report` group: building performance-report.json from data directories of 1, 10 and 50 MB
// (build time should grow linearly), and from a full default-cap directory (512 KiB ledger +
// 512 KiB .prev + 24 payloads), beside reading the same bytes from disk; and `perf-report check`
// on a report with 1,000 span names beside `summary` of the same report.
import Foundation
import Glibc
import Perf
import PerfReport

enum ReportBenchmarks {
    static let group = BenchGroup(name: "report") { context in
        let scratch = NSTemporaryDirectory() + "perf-bench-report-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        try defaultCap(context, directory: scratch + "/default-cap")
        try check(context, directory: scratch + "/check")
        var medians: [(megabytes: Int, ms: Double)] = []
        for megabytes in context.quick ? [1, 10] : [1, 10, 50] {
            medians.append(
                (megabytes, try sized(context, megabytes: megabytes, directory: scratch + "/\(megabytes)mb")))
        }
        // Linear means a constant cost per extra megabyte: compare the marginal cost of the
        // 10 → 50 MB step with the 1 → 10 MB step (a fixed per-build cost cancels out).
        guard medians.count >= 3 else { return }
        let marginal = zip(medians, medians.dropFirst()).map { ($1.ms - $0.ms) / Double($1.megabytes - $0.megabytes) }
        let ratio = marginal[1] / max(marginal[0], 1e-9)
        context.add(
            BenchRow(
                group: "report", name: "marginal build cost per MB, 10→50 MB over 1→10 MB", unit: "×", median: ratio,
                target: "0.5–2× (linear in data size)", pass: ratio >= 0.5 && ratio <= 2,
                note: String(format: "%.1f ms/MB then %.1f ms/MB", marginal[0], marginal[1])))
    }

    /// The directory Perf leaves at its default caps: both ledger files full and 24 payloads.
    static func defaultCap(_ context: BenchContext, directory: String) throws {
        try generate(directory: directory, ledgerBytes: 1024 * 1024, payloads: 24, spanNames: 200)
        let (build, read) = measure(directory: directory, runs: context.scaled(30, quick: 8))
        context.add(
            BenchRow(
                group: "report", name: "build, default-cap directory", unit: "ms", median: build.median, p99: build.p99,
                baseline: "reading the same files", baselineMedian: read.median,
                ratio: build.median / max(read.median, 1e-9),
                target: "≤ 100 ms", pass: build.median <= 100,
                note: "512 KiB ledger + 512 KiB .prev + 24 payloads of 200 span histograms", samples: build.count))
    }

    /// `perf-report check` as the CLI runs it (budgets file and report read and validated, every
    /// rule matched against 1,000 span names, the text verdict rendered), alternating with
    /// `perf-report summary` of the same report (read, validate, render): the cost of the rules.
    static func check(_ context: BenchContext, directory: String) throws {
        let spanNames = 1000
        try generate(directory: directory + "/data", ledgerBytes: 256 << 10, payloads: 1, spanNames: spanNames)
        let report = URL(fileURLWithPath: directory + "/performance-report.json")
        try Data(ReportBuilder(directory: URL(fileURLWithPath: directory + "/data")).build()).write(to: report)
        let budgets = URL(fileURLWithPath: directory + "/perf-budgets.json")
        try Data(checkBudgets(spanNames: spanNames).utf8).write(to: budgets)
        let spans = try ReportFigures(contentsOf: report).spans.count
        guard spans == spanNames else {
            throw Perf.ReportError(.invalidReport, path: report.path, "holds \(spans) span names, not \(spanNames)")
        }
        var checks: [Double] = []
        var summaries: [Double] = []
        var checked = 0
        for run in -1..<context.scaled(30, quick: 8) {
            var start = Bench.now()
            Bench.blackHole(try ReportSummary(contentsOf: report).text)
            let summary = Double(Bench.now() - start) / 1e6
            start = Bench.now()
            let verdict = try BudgetCheck(budgets: Budgets(contentsOf: budgets))
                .run(current: ReportFigures(contentsOf: report))
            Bench.blackHole(verdict.text(command: "check"))
            let check = Double(Bench.now() - start) / 1e6
            checked = verdict.checks.count
            if run >= 0 {
                checks.append(check)
                summaries.append(summary)
            }
        }
        let (subject, baseline) = (Distribution(checks), Distribution(summaries))
        context.add(
            BenchRow(
                group: "report", name: "check, report with 1,000 span names", unit: "ms", median: subject.median,
                p99: subject.p99, baseline: "summary of the same report", baselineMedian: baseline.median,
                baselineP99: baseline.p99, ratio: subject.median / max(baseline.median, 1e-9),
                target: "≤ 1 s (a CI step)", pass: subject.median <= 1000,
                note: "library calls of perf-report check: 101 rules, \(checked) checks, text verdict; "
                    + "a \(fileSize(report.path) >> 10) KiB report",
                samples: checks.count))
    }

    /// Budgets a large project might keep: a glob over every span, one rule per tenth name,
    /// hang and ledger limits.
    static func checkBudgets(spanNames: Int) -> String {
        let exact = stride(from: 0, to: spanNames, by: 10).map {
            #"{"match": "span.\#($0)", "limits": {"p99": {"max": "2s"}, "max": {"max": "5s", "level": "warn"}}}"#
        }
        return #"""
            {"version": 1, "defaults": {"minSamples": 1},
             "spans": [{"match": "span.*", "limits": {"count": {"min": 1}, "p50": {"max": "1s"}, "p95": {"max": "2s"}}},
                       \#(exact.joined(separator: ",\n"))],
             "hangs": {"count": {"max": 0}}, "ledger": {"malformedLines": {"max": 0}}}
            """#
    }

    static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    /// A directory of `megabytes` MB, ledger and payloads half and half; returns the median.
    static func sized(_ context: BenchContext, megabytes: Int, directory: String) throws -> Double {
        let payloadBytes = megabytes << 19
        // A 200-histogram payload is about 60 KB.
        let payloads = max(1, payloadBytes / 60_000)
        try generate(directory: directory, ledgerBytes: megabytes << 19, payloads: payloads, spanNames: 200)
        let (build, read) = measure(directory: directory, runs: context.scaled(megabytes >= 50 ? 5 : 12, quick: 3))
        context.add(
            BenchRow(
                group: "report", name: "build, \(megabytes) MB directory", unit: "ms", median: build.median,
                p99: build.p99, baseline: "reading the same files", baselineMedian: read.median,
                ratio: build.median / max(read.median, 1e-9),
                note: "\(payloads) payloads; the output stays under the 2 MiB cap", samples: build.count))
        return build.median
    }

    /// Alternates a build and a plain read of every file, in milliseconds.
    static func measure(directory: String, runs: Int) -> (build: Distribution, read: Distribution) {
        let url = URL(fileURLWithPath: directory)
        var builds: [Double] = []
        var reads: [Double] = []
        for run in -1..<runs {
            var start = Bench.now()
            Bench.blackHole(readEverything(directory))
            let read = Double(Bench.now() - start) / 1e6
            start = Bench.now()
            Bench.blackHole(try? ReportBuilder(directory: url).build())
            let build = Double(Bench.now() - start) / 1e6
            if run >= 0 {
                reads.append(read)
                builds.append(build)
            }
        }
        return (Distribution(builds), Distribution(reads))
    }

    static func readEverything(_ directory: String) -> Int {
        let paths = (try? FileManager.default.subpathsOfDirectory(atPath: directory)) ?? []
        var total = 0
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        for path in paths {
            let fd = open(directory + "/" + path, O_RDONLY)
            guard fd >= 0 else { continue }
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                total += count
            }
            close(fd)
        }
        return total
    }

    /// Writes ledger lines through the real writer (which rotates once at half the bytes, giving
    /// `.prev` and the current file) and `payloads` diagnostic payloads.
    static func generate(directory: String, ledgerBytes: Int, payloads: Int, spanNames: Int) throws {
        let url = URL(fileURLWithPath: directory)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        let writer = try LedgerWriter(directory: url, capBytes: ledgerBytes / 2)
        var sequence = 0
        while writer.statistics.bytesWritten < ledgerBytes - 512 {
            var event = LedgerEvent(
                kind: .span, name: "span.\(sequence % spanNames)", session: "session-\(sequence / 20_000)",
                timestampMs: 1_796_216_400_000 + Int64(sequence))
            event.durationMs = Double(sequence % 977) + 0.25
            event.budgetMs = 100
            event.exit = "success"
            event.site = "Bench/File.swift:\(sequence % 31)"
            try writer.append(event)
            sequence += 1
        }
        writer.close()
        var spans: [String: Perf.Histogram] = [:]
        for index in 0..<spanNames {
            var histogram = Perf.Histogram()
            for value in 0..<50 { histogram.record(nanos: UInt64((index + 1) * 10_000 + value * 104_729)) }
            spans["span.\(index)"] = histogram
        }
        let folder = directory + "/perf-diagnostics"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for index in 0..<payloads {
            let takenAtMs = 1_796_216_400_000 + Int64(index) * 60_000
            let snapshot = DiagnosticSnapshot(
                session: "session-\(index % 4)", takenAtMs: takenAtMs, reason: "periodic",
                app: Perf.AppInfo(name: "bench"), host: .current(), process: .current(), spans: spans, hangs: [:])
            let minute = index % 60
            let hour = 13 + index / 60 % 10
            let day = 2 + index / 600
            let name = String(format: "202612%02dT%02d%02d00000Z-session-%d.json", day, hour, minute, index % 4)
            try Data(snapshot.jsonBytes).write(to: URL(fileURLWithPath: folder + "/" + name))
        }
    }
}
