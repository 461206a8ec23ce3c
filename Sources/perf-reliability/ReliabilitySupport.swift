// What every reliability scenario shares: its one-line JSON result (PASS, MISS or SKIPPED), the
// children it drives (`perf-test-child`, through PerfTestSupport's `ChildProcess`), scratch
// directories and tools run to completion.
import Foundation
import Glibc
import Perf
import PerfTestSupport
import Synchronization

/// The one machine-readable line a scenario prints: `scripts/reliability.sh` collects these and
/// `perf-reliability report` turns them into `Reports/RELIABILITY.md`.
struct ScenarioResult: Codable {
    var scenario: String
    /// What was done, with its counts, in words.
    var done: String
    /// The target from the issue.
    var target: String
    /// What was measured against the target.
    var result: String
    /// Met its target. Never true for a scenario that could not run.
    var pass: Bool
    var notes: String = ""
    var seconds: Double = 0
    /// The raw counts behind `done` and `result`, for machines.
    var counts: [String: Double] = [:]
    /// Could not run here (no privilege to mount, no tool): neither a pass nor a miss.
    var skipped = false

    enum Status: String, Codable {
        case pass = "PASS"
        case miss = "MISS"
        case skipped = "SKIPPED"
    }

    /// What the report and the script print: a skipped scenario is never counted as a pass and
    /// does not fail the run.
    var status: Status { skipped ? .skipped : pass ? .pass : .miss }

    /// A scenario that cannot run here: `why` says what was missing.
    static func skipped(scenario: String, target: String, why: String, notes: String = "") -> ScenarioResult {
        ScenarioResult(
            scenario: scenario, done: "not run: \(why)", target: target, result: "SKIPPED (cannot run here)",
            pass: false, notes: notes, skipped: true)
    }

    private enum CodingKeys: String, CodingKey {
        case scenario, done, target, result, pass, notes, seconds, counts, skipped, status
    }

    init(
        scenario: String, done: String, target: String, result: String, pass: Bool, notes: String = "",
        seconds: Double = 0, counts: [String: Double] = [:], skipped: Bool = false
    ) {
        self.scenario = scenario
        self.done = done
        self.target = target
        self.result = result
        self.pass = pass && !skipped
        self.notes = notes
        self.seconds = seconds
        self.counts = counts
        self.skipped = skipped
    }

    /// Lines without `skipped` or `status` (older runs, the script's "did not finish" line) read
    /// as PASS or MISS from `pass`.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let status = try container.decodeIfPresent(Status.self, forKey: .status)
        self.init(
            scenario: try container.decode(String.self, forKey: .scenario),
            done: try container.decodeIfPresent(String.self, forKey: .done) ?? "",
            target: try container.decodeIfPresent(String.self, forKey: .target) ?? "",
            result: try container.decodeIfPresent(String.self, forKey: .result) ?? "",
            pass: try container.decodeIfPresent(Bool.self, forKey: .pass) ?? false,
            notes: try container.decodeIfPresent(String.self, forKey: .notes) ?? "",
            seconds: try container.decodeIfPresent(Double.self, forKey: .seconds) ?? 0,
            counts: try container.decodeIfPresent([String: Double].self, forKey: .counts) ?? [:],
            skipped: try container.decodeIfPresent(Bool.self, forKey: .skipped) ?? (status == .skipped))
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(scenario, forKey: .scenario)
        try container.encode(done, forKey: .done)
        try container.encode(target, forKey: .target)
        try container.encode(result, forKey: .result)
        try container.encode(pass, forKey: .pass)
        try container.encode(skipped, forKey: .skipped)
        try container.encode(status, forKey: .status)
        try container.encode(notes, forKey: .notes)
        try container.encode(seconds, forKey: .seconds)
        try container.encode(counts, forKey: .counts)
    }

    /// Prints the result as one JSON line on stdout (the scenario's only stdout line).
    func emit() {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let fallback = "{\"scenario\":\"\(scenario)\",\"pass\":false,\"status\":\"MISS\"}"
        let data = (try? encoder.encode(self)) ?? Data(fallback.utf8)
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }
}

/// Progress for the operator, on stderr so stdout stays one line per scenario.
func progress(_ message: String) {
    FileHandle.standardError.write(Data("reliability: \(message)\n".utf8))
}

/// The child processes the scenarios drive: `perf-test-child`, built beside this executable.
let testChild = BuildProducts.testChild

/// Scratch directories are the tests' temporary directories.
typealias ScratchDirectory = TemporaryDirectory

/// Threads released together, for the soaks.
enum Stress {
    /// Keeps `value` alive so the optimiser cannot drop the work that made it.
    static func blackHole<T>(_ value: T) {
        withExtendedLifetime(value) {}
    }

    /// Runs `body` on `threads` threads at once (released together) and returns each thread's result.
    static func concurrently<T: Sendable>(threads: Int, _ body: @escaping @Sendable (Int) -> T) -> [T] {
        let results = Mutex<[T?]>(Array(repeating: nil, count: threads))
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for index in 0..<threads {
            done.enter()
            Thread {
                start.wait()
                let value = body(index)
                results.withLock { $0[index] = value }
                done.leave()
            }.start()
        }
        for _ in 0..<threads { start.signal() }
        done.wait()
        return results.withLock { $0.compactMap { $0 } }
    }
}

extension ChildProcess {
    /// The output of the last tool that failed, for error messages.
    nonisolated(unsafe) static var lastToolOutput = ""

    /// Runs a tool to completion; true when it exited 0 (otherwise its output is kept in
    /// ``lastToolOutput``).
    static func runTool(_ arguments: [String]) -> Bool {
        guard
            let tool = try? ChildProcess(
                executable: arguments[0], arguments: Array(arguments.dropFirst()), mergeStandardError: true)
        else { return false }
        let output = tool.readRemainingLines()
        let status = tool.wait()
        let succeeded = exitedNormally(status) && exitCode(status) == 0
        if !succeeded { lastToolOutput = "\(arguments.joined(separator: " ")): \(output.joined(separator: " "))" }
        return succeeded
    }
}
