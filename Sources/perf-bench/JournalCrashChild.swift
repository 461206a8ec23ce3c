// `perf-bench child journal-append …`: a journal writer that tests and scripts SIGKILL at a
// random instant, and the soak loop that kills it on demand and checks every acknowledgement.
import CPerfShims
import Foundation
import Glibc
import JournalKit

/// The crash child and its soak driver.
///
/// ```
/// perf-bench child journal-append run <dir> <threads> <run-id> <seed>
///     appends entries of 12–2000 bytes from 1 or 2 threads until killed; after each append
///     returns it writes "<thread> <index>\n" to stdout (one write(2), atomic on a pipe).
/// perf-bench child journal-append soak <kills> [<dir>]
///     kills a `run` child <kills> times at random moments, reopening the same journal (a new
///     one every 50 kills), and prints kills, acknowledged, lost (must be 0) and torn tails.
/// ```
/// The test suite's SIGKILL test keeps its own copy of the payload format and the kill loop
/// (`Tests/JournalKitTests/CrashHarness.swift`): a test target cannot import an executable.
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
                ("usage: perf-bench child journal-append run <dir> <threads> <run-id> <seed>\n"
                    + "       perf-bench child journal-append soak <kills> [<dir>]\n").utf8))
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
                var sizes = SplitMix(seed: seed ^ UInt64(thread) << 56)
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
        var random = SplitMix(seed: perf_realtime_ns())
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
                    arguments: ["child", "journal-append", "run", directory, "\(threads)", "\(runID)", "\(seed)"],
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

/// The self-checking payload the crash child appends: `[u32 run][u32 thread][u32 index]`
/// then bytes derived from those three, so recovery can tell a whole entry from a damaged one.
enum CrashPayload {
    struct ID: Hashable {
        var runID: UInt32
        var thread: UInt32
        var index: UInt32
    }

    static func make(runID: UInt32, thread: UInt32, index: UInt32, size: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: size)
        bytes.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: runID.littleEndian, toByteOffset: 0, as: UInt32.self)
            raw.storeBytes(of: thread.littleEndian, toByteOffset: 4, as: UInt32.self)
            raw.storeBytes(of: index.littleEndian, toByteOffset: 8, as: UInt32.self)
            fill(raw, from: 12, key: key(runID, thread, index, size))
        }
        return bytes
    }

    /// The entry's identity when its bytes are exactly what `make` produced, else nil.
    static func verify(_ entry: Data) -> ID? {
        guard entry.count >= 12 else { return nil }
        var copy = [UInt8](entry)
        return copy.withUnsafeMutableBytes { raw -> ID? in
            let id = ID(
                runID: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt32.self)),
                thread: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self)),
                index: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
            let original = Array(raw[12...])
            fill(raw, from: 12, key: key(id.runID, id.thread, id.index, raw.count))
            return Array(raw[12...]) == original ? id : nil
        }
    }

    private static func key(_ runID: UInt32, _ thread: UInt32, _ index: UInt32, _ size: Int) -> UInt64 {
        UInt64(runID) << 48 ^ UInt64(thread) << 40 ^ UInt64(index) << 16 ^ UInt64(size)
    }

    private static func fill(_ raw: UnsafeMutableRawBufferPointer, from start: Int, key: UInt64) {
        var generator = SplitMix(seed: key)
        var offset = start
        while offset < raw.count {
            let word = generator.next()
            withUnsafeBytes(of: word) { bytes in
                for byte in bytes where offset < raw.count {
                    raw[offset] = byte
                    offset += 1
                }
            }
        }
    }
}

/// SplitMix64: small and repeatable (the JournalKit tests use it as their seeded generator).
struct SplitMix: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Spawns a child, reads its acknowledgements, SIGKILLs it, and returns every acknowledgement
/// it managed to write (including those still in the pipe when it died).
enum CrashHarness {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func runAndKill(
        executable: String, arguments: [String], acknowledgementsBeforeKill target: Int
    ) throws -> [(thread: UInt32, index: UInt32)] {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw Failure(description: "pipe failed: errno \(errno)") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
        posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        close(pipeEnds[1])
        defer { close(pipeEnds[0]) }
        guard spawned == 0 else { throw Failure(description: "posix_spawn failed: \(spawned)") }
        var acks: [(thread: UInt32, index: UInt32)] = []
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var killed = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(pipeEnds[0], $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            pending.append(contentsOf: buffer[..<count])
            while let newline = pending.firstIndex(of: 10) {
                let fields = String(decoding: pending[..<newline], as: UTF8.self).split(separator: " ")
                pending.removeSubrange(...newline)
                if fields.count == 2, let thread = UInt32(fields[0]), let index = UInt32(fields[1]) {
                    acks.append((thread, index))
                }
            }
            if !killed && acks.count >= target {
                kill(pid, SIGKILL)
                killed = true
            }
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        guard killed else { throw Failure(description: "the child exited on its own (status \(status))") }
        return acks
    }
}
