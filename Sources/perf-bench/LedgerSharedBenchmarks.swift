// Ledger rows with several processes on one data directory: an over-budget append from
// one process and from four sharing the directory, each beside raw write(2)s of the same line to
// one shared O_APPEND file from the same number of processes, measured in the same children.
import Foundation
import Glibc
import Perf

enum LedgerShared {
    /// Hidden argument: one child process of these rows.
    static let childCommand = "--ledger-shared-child"
    static let capBytes = 512 * 1024

    static func run(_ context: BenchContext, scratch: String) throws {
        let count = context.scaled(40_000, quick: 8_000)
        for processes in [1, 4] {
            let directory = scratch + "/shared-\(processes)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let children = try (0..<processes).map { _ in try Child(directory: directory, count: count) }
            // Start them together: every child has opened its writer and waits for this line.
            for child in children { child.go() }
            let results = try children.map { try $0.result() }
            let ledger = median(results.map(\.ledger))
            let raw = median(results.map(\.raw))
            let ratio = ledger / raw
            let label = processes == 1 ? "1 process" : "\(processes) processes sharing one directory"
            context.add(
                BenchRow(
                    group: "ledger", name: "over-budget append, \(label) (median of process medians)",
                    unit: "ns/op", median: ledger, p99: median(results.map(\.ledgerP99)),
                    baseline: "raw write(2) of the same line from \(processes) process(es) to one O_APPEND file",
                    baselineMedian: raw, baselineP99: median(results.map(\.rawP99)), ratio: ratio,
                    target: "≤ 3.5× raw write", pass: ratio <= 3.5,
                    note: "\(count) appends per process into a \(capBytes / 1024) KiB cap (rotations included: "
                        + "\(results.map(\.rotations).reduce(0, +)) in all); rounds alternate ledger and raw; "
                        + "under-budget ends take no part of this path (see facade rows of the same run)",
                    samples: processes))
        }
    }

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    struct Result {
        var ledger: Double
        var ledgerP99: Double
        var raw: Double
        var rawP99: Double
        var rotations: Int
    }

    /// One child process, spawned with pipes for its "go" and its result line.
    final class Child {
        let process = Process()
        let input = Pipe()
        let output = Pipe()

        init(directory: String, count: Int) throws {
            process.executableURL = URL(fileURLWithPath: SpanMemoryRSS.executablePath())
            process.arguments = [childCommand, directory, String(count)]
            process.standardInput = input
            process.standardOutput = output
            try process.run()
        }

        func go() { input.fileHandleForWriting.write(Data("go\n".utf8)) }

        func result() throws -> Result {
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            var fields: [String: Double] = [:]
            for pair in text.split(whereSeparator: \.isWhitespace) {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, let value = Double(parts[1]) { fields[String(parts[0])] = value }
            }
            guard process.terminationStatus == 0, let ledger = fields["ledger"], let raw = fields["raw"],
                let ledgerP99 = fields["ledger_p99"], let rawP99 = fields["raw_p99"],
                let rotations = fields["rotations"]
            else { throw BenchFailure("ledger shared child failed (status \(process.terminationStatus)): \(text)") }
            return Result(ledger: ledger, ledgerP99: ledgerP99, raw: raw, rawP99: rawP99, rotations: Int(rotations))
        }
    }

    /// The child: opens a writer on the shared directory, waits for "go", then alternates rounds of
    /// ledger appends and raw writes, and prints `key=value` pairs.
    static func child(_ arguments: [String]) -> Never {
        guard arguments.count == 2, let count = Int(arguments[1]) else {
            FileHandle.standardError.write(Data("usage: perf-bench \(childCommand) <dir> <count>\n".utf8))
            exit(2)
        }
        let directory = URL(fileURLWithPath: arguments[0])
        do {
            let writer = try LedgerWriter(directory: directory, capBytes: capBytes)
            let line = try LedgerBenchmarks.sampleLine()
            let raw = try LedgerBenchmarks.RawAppender(path: arguments[0] + "/raw/raw.jsonl", line: line)
            let event = LedgerBenchmarks.sampleEvent(0)
            _ = readLine()
            var mine: [Double] = []
            var base: [Double] = []
            for _ in 0..<5 {
                base += LedgerBenchmarks.latencies(count / 5) { raw.write() }
                mine += LedgerBenchmarks.latencies(count / 5) { try? writer.append(event) }
            }
            let ledger = Distribution(mine)
            let baseline = Distribution(base)
            print(
                "ledger=\(ledger.median) ledger_p99=\(ledger.p99) raw=\(baseline.median) raw_p99=\(baseline.p99) "
                    + "rotations=\(writer.statistics.rotations)")
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("perf-bench: \(error)\n".utf8))
            exit(1)
        }
    }
}
