// `perf-reliability <scenario> [--quick]`: runs one reliability scenario and prints its result as
// one JSON line (PASS, MISS, or SKIPPED when it cannot run here); `perf-reliability report`
// renders collected lines as Markdown.
// `scripts/reliability.sh` runs every scenario under `timeout` and writes Reports/RELIABILITY.md.
import Foundation
import Glibc
import PerfTestSupport

enum Reliability {
    static let usage = """
        OVERVIEW: Perf's reliability scenarios: kills, crash story, disk faults, bad input,
        concurrency, watchdog false positives and privacy, each printing one JSON result line.

        USAGE: perf-reliability <scenario> [--quick] [--seed <n>] [--rounds <n>] [--perf-report <path>]
                                [--budgets <path>]
               perf-reliability report --results <file> --out <file> --command <text>

        SCENARIOS: \(scenarios.map(\.name).joined(separator: ", "))

        OPTIONS:
          --quick                 The small counts CI runs.
          --seed <n>              Seed of the randomised scenarios (default: from the clock; printed).
          --rounds <n>            Kills of burst-kill (default 100, --quick 10).
          --perf-report <path>    The perf-report binary (default: next to perf-reliability).
          --budgets <path>        The budgets file bad input mutates (default scripts/perf-budgets.json).

        """

    struct Options: Sendable {
        var quick = false
        var seed = UInt64(DispatchTime.now().uptimeNanoseconds)
        var perfReport = BuildProducts.executable("perf-report")
        var budgets = "scripts/perf-budgets.json"
        var rounds: Int?

        func pick<T>(full: T, quick: T) -> T { self.quick ? quick : full }
    }

    struct Scenario: Sendable {
        let name: String
        let run: @Sendable (Options) throws -> ScenarioResult
    }

    static let scenarios: [Scenario] = [
        Scenario(name: "journal-kill") { try ReliabilityKills.journal(kills: $0.pick(full: 1_000, quick: 50)) },
        Scenario(name: "ledger-kill") {
            try ReliabilityKills.ledger(kills: $0.pick(full: 300, quick: 20), seed: $0.seed)
        },
        Scenario(name: "crash-story") {
            try ReliabilityKills.crashStory(kills: $0.pick(full: 100, quick: 10), seed: $0.seed)
        },
        Scenario(name: "burst-kill") {
            try ReliabilityBurstKill.run(rounds: $0.rounds ?? $0.pick(full: 100, quick: 10), seed: $0.seed)
        },
        Scenario(name: "span-memory-kill") {
            try ReliabilitySpanMemory.kills($0.pick(full: 500, quick: 100), seed: $0.seed)
        },
        Scenario(name: "shared-directory") { try ReliabilitySharedDirectory.run(runs: $0.pick(full: 10, quick: 2)) },
        Scenario(name: "disk-fsize") { _ in try ReliabilityDiskFaults.fileSizeLimit() },
        Scenario(name: "disk-tmpfs") { _ in try ReliabilityDiskFaults.tinyFilesystem() },
        Scenario(name: "disk-deleted") { _ in try ReliabilityDiskFaults.directoryDeleted() },
        Scenario(name: "disk-readonly") { _ in try ReliabilityDiskFaults.readOnly() },
        Scenario(name: "disk-readonly-mount") { _ in try ReliabilityDiskFaults.readOnlyMount() },
        Scenario(name: "fault-write-eio") { _ in try ReliabilityFaultInjection.writeEIO() },
        Scenario(name: "fault-write-enospc") { _ in try ReliabilityFaultInjection.writeENOSPC() },
        Scenario(name: "fault-rename-exdev") { _ in try ReliabilityFaultInjection.renameEXDEV() },
        Scenario(name: "fault-openat-emfile") { _ in try ReliabilityFaultInjection.openEMFILE() },
        Scenario(name: "fault-short-write") { _ in try ReliabilityFaultInjection.shortWrite() },
        Scenario(name: "bad-input") {
            try ReliabilityBadInput.run(
                files: $0.pick(full: 10_000, quick: 1_000), cliRuns: $0.pick(full: 420, quick: 70), seed: $0.seed,
                perfReport: $0.perfReport, budgetsPath: $0.budgets)
        },
        Scenario(name: "concurrency") {
            try ReliabilityConcurrency.soak(seconds: $0.pick(full: 60, quick: 10), threads: 8, capBytes: 16 * 1024)
        },
        Scenario(name: "watchdog") {
            try ReliabilityWatchdog.falsePositives(
                stops: $0.pick(full: 10, quick: 2), stopSeconds: 2, starveSeconds: $0.pick(full: 10, quick: 3))
        },
        Scenario(name: "privacy") {
            try ReliabilityPrivacy.run(strings: $0.pick(full: 100_000, quick: 10_000), seed: $0.seed)
        },
    ]

    /// Runs `arguments` and returns the exit status: 0 pass or skipped, 1 miss, 2 usage.
    static func main(_ arguments: [String]) -> Int32 {
        guard let name = arguments.first, !["-h", "--help"].contains(name) else {
            print(usage, terminator: "")
            return arguments.isEmpty ? 2 : 0
        }
        if name == "report" { return ReliabilityMarkdown.main(Array(arguments.dropFirst())) }
        guard let scenario = scenarios.first(where: { $0.name == name }) else {
            return usageError("unknown scenario '\(name)'")
        }
        var options = Options()
        var rest = Array(arguments.dropFirst())
        while !rest.isEmpty {
            let argument = rest.removeFirst()
            switch argument {
            case "--quick": options.quick = true
            case "--seed" where !rest.isEmpty:
                guard let seed = UInt64(rest.removeFirst()) else { return usageError("--seed needs an integer") }
                options.seed = seed
            case "--rounds" where !rest.isEmpty:
                guard let rounds = Int(rest.removeFirst()), rounds > 0 else {
                    return usageError("--rounds needs a positive integer")
                }
                options.rounds = rounds
            case "--perf-report" where !rest.isEmpty: options.perfReport = rest.removeFirst()
            case "--budgets" where !rest.isEmpty: options.budgets = rest.removeFirst()
            default: return usageError("unexpected argument '\(argument)'")
            }
        }
        let started = monotonicSeconds()
        var result: ScenarioResult
        do {
            result = try scenario.run(options)
        } catch {
            result = ScenarioResult(
                scenario: name, done: "did not complete", target: "", result: "error: \(error)", pass: false,
                notes: "seed \(options.seed)")
        }
        result.seconds = ((monotonicSeconds() - started) * 10).rounded() / 10
        result.emit()
        return result.status == .miss ? 1 : 0
    }

    private static func usageError(_ message: String) -> Int32 {
        FileHandle.standardError.write(Data("Error: \(message)\n\n\(usage)".utf8))
        return 2
    }
}
