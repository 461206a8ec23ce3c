// The journal crash child's payload format and the kill loop that drives it, shared by the child
// (`perf-test-child journal-append`), its soak, and the SIGKILL test of JournalKitTests.
import Foundation
import Glibc

/// The self-checking payload the crash child appends: `[u32 run][u32 thread][u32 index]`
/// then bytes derived from those three, so recovery can tell a whole entry from a damaged one.
public enum CrashPayload {
    public struct ID: Hashable, Sendable {
        public var runID: UInt32
        public var thread: UInt32
        public var index: UInt32

        public init(runID: UInt32, thread: UInt32, index: UInt32) {
            self.runID = runID
            self.thread = thread
            self.index = index
        }
    }

    public static func make(runID: UInt32, thread: UInt32, index: UInt32, size: Int) -> [UInt8] {
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
    public static func verify(_ entry: Data) -> ID? {
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
        var generator = SeededRandom(seed: key)
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

/// Spawns a child, reads its acknowledgements, SIGKILLs it, and returns every acknowledgement
/// it managed to write (including those still in the pipe when it died).
public enum CrashHarness {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public static func runAndKill(
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
