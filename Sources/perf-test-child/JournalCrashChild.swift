// `perf-test-child journal-append …`: a journal writer that tests and scripts SIGKILL at a
// random instant, and the soak loop that kills it on demand and checks every acknowledgement.
import CPerfShims
import Foundation
import Glibc
import JournalKit
import PerfTestSupport

/// The crash child and its soak driver.
///
/// ```
/// perf-test-child journal-append run <dir> <threads> <run-id> <seed>
///     appends entries of 12–2000 bytes from 1 or 2 threads until killed; after each append
///     returns it writes "<thread> <index>\n" to stdout (one write(2), atomic on a pipe).
/// perf-test-child journal-append soak <kills> [<dir>]
///     kills a `run` child <kills> times at random moments, reopening the same journal (a new
///     one every 50 kills), and prints kills, acknowledged, lost (must be 0) and torn tails.
/// ```
/// The payload format and the kill loop live in PerfTestSupport (`CrashPayload`, `CrashHarness`),
/// shared with the SIGKILL test of JournalKitTests.
enum JournalCrashChild {
    static func run(_ arguments: [String]) -> Int32 {
        switch arguments.first {
        case "run" where arguments.count == 5:
            guard let threads = Int(arguments[2]), (1...2).contains(threads), let runID = UInt32(arguments[3]),
                let seed = UInt64(arguments[4])
            else { return usage() }
            return append(directory: arguments[1], threads: threads, runID: runID, seed: seed)
        case "soak" where arguments.count >= 2:
            guard let kills = Int(arguments[1]), kills > 0 else { return usage() }
            return soak(kills: kills, directory: arguments.count > 2 ? arguments[2] : nil)
        default:
            return usage()
        }
    }

    private static func usage() -> Int32 {
        FileHandle.standardError.write(
            Data(
                ("usage: perf-test-child journal-append run <dir> <threads> <run-id> <seed>\n"
                    + "       perf-test-child journal-append soak <kills> [<dir>]\n").utf8))
        return 2
    }

    private static func append(directory: String, threads: Int, runID: UInt32, seed: UInt64) -> Int32 {
        let journal: Journal
        do {
            // A budget no run reaches: rotation would drop acknowledged entries on purpose.
            journal = try Journal(
                directory: URL(fileURLWithPath: directory),
                configuration: .init(byteBudget: 1 << 30, segmentHeader: Data("crash-child run \(runID)".utf8)))
        } catch {
            FileHandle.standardError.write(Data("journal-append: \(error)\n".utf8))
            return 1
        }
        for thread in 0..<threads {
            Thread {
                var sizes = SeededRandom(seed: seed ^ UInt64(thread) << 56)
                var index: UInt32 = 0
                while true {
                    let size = 12 + Int(sizes.next() % 1989)
                    let payload = CrashPayload.make(runID: runID, thread: UInt32(thread), index: index, size: size)
                    do {
                        try payload.withUnsafeBytes { try journal.append($0) }
                    } catch {
                        FileHandle.standardError.write(Data("journal-append: \(error)\n".utf8))
                        exit(1)
                    }
                    let line = Array("\(thread) \(index)\n".utf8)
                    _ = line.withUnsafeBytes { Glibc.write(1, $0.baseAddress, $0.count) }
                    index += 1
                }
            }.start()
        }
        while true { pause() }
    }

    private static func soak(kills: Int, directory: String?) -> Int32 {
        let directory = directory ?? NSTemporaryDirectory() + "journal-soak-\(getpid())"
        let url = URL(fileURLWithPath: directory)
        var random = SeededRandom(seed: perf_realtime_ns())
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        var acknowledged = Set<CrashPayload.ID>()
        var totalAcknowledged = 0
        var torn = 0
        var tornBefore = 0
        for kill in 0..<kills {
            if kill % 50 == 0 {
                try? FileManager.default.removeItem(atPath: directory)
                acknowledged.removeAll()
                tornBefore = 0
            }
            let threads = kill % 2 + 1
            let runID = UInt32(kill % 50)
            let seed = random.next()
            let target = 1 + Int(random.next() % 600)
            let acks: [(thread: UInt32, index: UInt32)]
            do {
                acks = try CrashHarness.runAndKill(
                    executable: executable,
                    arguments: ["journal-append", "run", directory, "\(threads)", "\(runID)", "\(seed)"],
                    acknowledgementsBeforeKill: target)
            } catch {
                print("journal soak: kill \(kill + 1): \(error)")
                return 1
            }
            totalAcknowledged += acks.count
            for ack in acks { acknowledged.insert(CrashPayload.ID(runID: runID, thread: ack.thread, index: ack.index)) }
            let recovery: Journal.Recovery
            do { recovery = try Journal.recover(directory: url) } catch {
                print("journal soak: recovery threw \(error)")
                return 1
            }
            torn += recovery.tornSegmentCount - tornBefore
            tornBefore = recovery.tornSegmentCount
            let recovered = Set(recovery.entries.compactMap(CrashPayload.verify))
            let lost = acknowledged.subtracting(recovered).count
            let corrupt = recovery.entries.count - recovered.count
            if lost > 0 || corrupt > 0 {
                print(
                    "journal soak: kill \(kill + 1): lost \(lost) acknowledged entries, \(corrupt) corrupt (seed \(seed))"
                )
                print(
                    "kills: \(kill + 1)\nacknowledged: \(totalAcknowledged)\nlost: \(lost)\ntorn tails observed: \(torn)"
                )
                return 1
            }
            if (kill + 1) % 100 == 0 {
                print("journal soak: \(kill + 1) kills, \(totalAcknowledged) acknowledged, 0 lost, \(torn) torn tails")
            }
        }
        try? FileManager.default.removeItem(atPath: directory)
        print("kills: \(kills)\nacknowledged: \(totalAcknowledged)\nlost: 0\ntorn tails observed: \(torn)")
        return 0
    }
}
