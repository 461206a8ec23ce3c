// The next start's half of the ledger queue: what a killed process had queued reaches the ledger
// once, in order, with its drops told; damaged entries are skipped and counted; no bytes in a
// queue file crash the reader.
import Foundation
import Glibc
import JournalKit
import PerfCore
import PerfTestSupport
import Testing

@testable import Perf

/// A queue file made by hand, following SpanMemoryFormat.md's "Ledger queue": a 4,096-byte
/// little-endian header, then the ring of entries (u32 length word, u32 CRC-32C of the line,
/// the line, zeros to 8 bytes).
struct LedgerQueueImage {
    var bytes: [UInt8]

    init(capacity: Int = 64 * 1024) {
        bytes = [UInt8](repeating: 0, count: LedgerQueue.headerBytes + capacity)
        self[LedgerQueue.Field.magic] = LedgerQueue.magic
        store(LedgerQueue.version, at: LedgerQueue.Field.version)
        self[LedgerQueue.Field.capacity] = UInt64(capacity)
    }

    /// A file's bytes as they are.
    init(bytes: [UInt8]) { self.bytes = bytes }

    var capacity: UInt64 { UInt64(bytes.count - LedgerQueue.headerBytes) }

    /// A header field.
    subscript(field: Int) -> UInt64 {
        get { bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: field, as: UInt64.self)) } }
        set {
            bytes.withUnsafeMutableBytes {
                $0.storeBytes(of: newValue.littleEndian, toByteOffset: field, as: UInt64.self)
            }
        }
    }

    mutating func store(_ value: UInt32, at offset: Int) {
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self) }
    }

    /// Writes `line`'s entry at ring position `position` and returns the position after it. A
    /// `copying` entry has bit 31 set and only the first half of its line copied.
    @discardableResult
    mutating func entry(_ line: [UInt8], at position: UInt64, copying: Bool = false, checksum: UInt32? = nil) -> UInt64
    {
        let offset = LedgerQueue.headerBytes + Int(position % capacity)
        store(UInt32(line.count) | (copying ? LedgerQueue.copyingBit : 0), at: offset)
        store(checksum ?? line.withUnsafeBytes { CRC32C.checksum($0) }, at: offset + 4)
        let copied = copying ? line.count / 2 : line.count
        bytes.replaceSubrange(offset + 8..<offset + 8 + copied, with: line.prefix(copied))
        return position + LedgerQueue.entryBytes(line.count)
    }

    /// Writes a skip word at `position` and returns the start of the next lap.
    mutating func skip(at position: UInt64) -> UInt64 {
        store(LedgerQueue.skipWord, at: LedgerQueue.headerBytes + Int(position % capacity))
        return position + capacity - position % capacity
    }

    /// Sets `tail` and `writing` to `tail`, `head` to `head`.
    mutating func span(tail: UInt64, head: UInt64) {
        self[LedgerQueue.Field.tail] = tail
        self[LedgerQueue.Field.writing] = tail
        self[LedgerQueue.Field.head] = head
    }
}

/// The directory a next start replays into: its ledger writer and a place for the queue file.
struct LedgerReplayTarget {
    static let session = "s-killed"
    let directory: TemporaryDirectory
    let writer: LedgerWriter

    init(_ label: String = #function, capBytes: Int = 1 << 30) throws {
        directory = try TemporaryDirectory(label)
        writer = try LedgerWriter(
            directory: directory.url, capBytes: capBytes, syscalls: FileSyscalls(), report: { _ in })
    }

    var queuePath: String { directory.file("killed.queue").path }

    /// Writes the queue file over the old one, then cuts it to length: not `O_TRUNC`, after which
    /// ext4 writes the file back at close (its replace-by-truncate heuristic), milliseconds a file.
    func place(_ bytes: [UInt8]) throws {
        let fd = open(queuePath, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ChildProcess.Failure(description: "cannot open \(queuePath): errno \(errno)") }
        defer { close(fd) }
        let status = bytes.withUnsafeBytes { FileSyscalls().writeAll(fd, $0) }
        guard status == 0, ftruncate(fd, off_t(bytes.count)) == 0 else {
            throw ChildProcess.Failure(description: "cannot write \(queuePath): errno \(status == 0 ? errno : status)")
        }
    }

    func replay() -> LedgerQueue.Replay? { LedgerQueue.replay(path: queuePath, into: writer, session: Self.session) }

    func ledgerBytes() -> [UInt8] { (try? Data(contentsOf: directory.ledger)).map { Array($0) } ?? [] }

    func queueBytes() -> [UInt8] { (try? Data(contentsOf: URL(fileURLWithPath: queuePath))).map { Array($0) } ?? [] }

    func remove() {
        writer.close()
        directory.remove()
    }
}

@Suite struct LedgerQueueReplayTests {
    /// What a process killed mid-drain leaves, made by a live queue: its file copied while the
    /// drain is stuck writing the first line (`writing` past `tail`), the other accepted lines
    /// queued behind it, and `refusals` lines refused for want of room (counted in `dropped`).
    struct KilledQueue {
        var file: [UInt8]
        var lines: [[UInt8]]
        var refused = 0
    }

    static func killedQueue(seed: UInt64, accepting count: Int, thenRefusing refusals: Int) throws -> KilledQueue {
        var random = SeededRandom(seed: seed)
        let rig = try LedgerQueueRig("queue-killed")
        defer { rig.remove() }
        var killed = KilledQueue(file: [], lines: [LedgerQueueRig.numberedLine(thread: 0, index: 0, padding: 20)])
        try rig.whileDrainIsHeld(first: killed.lines[0]) {
            var index = 1
            while killed.lines.count < count || killed.refused < refusals {
                let padding = Int.random(in: 0...(killed.lines.count < count ? 300 : 3_000), using: &random)
                let line = LedgerQueueRig.numberedLine(thread: 0, index: index, padding: padding)
                if rig.submit(line) { killed.lines.append(line) } else { killed.refused += 1 }
                index += 1
                try #require(index < 10_000, "seed \(seed): the ring never filled")
            }
            killed.file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: rig.queuePath)))
        }
        let image = LedgerQueueImage(bytes: killed.file)
        #expect(image[LedgerQueue.Field.writing] > image[LedgerQueue.Field.tail], "seed \(seed): no run was in flight")
        return killed
    }

    @Test func replayWritesWhatAKilledProcessHadQueuedThenNothingTheSecondTime() throws {
        let seed = SeededRandom.makeSeed()
        let killed = try Self.killedQueue(seed: seed, accepting: 30, thenRefusing: 5)
        let next = try LedgerReplayTarget()
        defer { next.remove() }
        try next.place(killed.file)
        let replay = next.replay()
        #expect(replay == LedgerQueue.Replay(lines: killed.lines.count, dropped: 5), "seed \(seed)")
        let file = next.ledgerBytes()
        let queued = killed.lines.flatMap { $0 }
        #expect(Array(file.prefix(queued.count)) == queued, "seed \(seed): not the queued lines in order")
        let rest = Array(file.dropFirst(queued.count))
        #expect(rest.last == UInt8(ascii: "\n") && rest.filter { $0 == UInt8(ascii: "\n") }.count == 1, "seed \(seed)")
        let told = Array(rest.dropLast()).withUnsafeBufferPointer { LedgerEvent.parse(line: $0) }
        #expect(told?.kind == .dropped && told?.count == 5 && told?.session == LedgerReplayTarget.session)
        #expect(told?.extra["cause"] == .string(DropCause.backlog.rawValue))
        // A second start (this one killed before its session was acknowledged) writes nothing again.
        #expect(next.replay() == LedgerQueue.Replay())
        #expect(next.ledgerBytes() == file)
    }

    /// `writing` past `tail`: the run up to it may be in the ledger already (the write returned,
    /// the `tail` store did not). It is skipped when the ledger holds it, written when it does not.
    @Test func replaySkipsTheRunBeingWrittenOnlyWhenTheLedgerHoldsIt() throws {
        let seed = SeededRandom.makeSeed()
        let killed = try Self.killedQueue(seed: seed, accepting: 20, thenRefusing: 0)
        let all = killed.lines.flatMap { $0 }
        let older = Array(
            "{\"v\":1,\"ts\":\"2026-12-05T00:00:00.000Z\",\"kind\":\"note\",\"name\":\"older\",\"session\":\"s0\"}\n"
                .utf8)

        let written = try LedgerReplayTarget("queue-run-written")
        defer { written.remove() }
        _ = written.writer.append(encodedLines: (older + killed.lines[0])[...], count: 2, session: "s0")
        try written.place(killed.file)
        #expect(
            written.replay() == LedgerQueue.Replay(lines: killed.lines.count - 1, runAlreadyWritten: true),
            "seed \(seed)")
        #expect(written.ledgerBytes() == older + all, "seed \(seed): the run was written twice or not at all")

        let unwritten = try LedgerReplayTarget("queue-run-unwritten")
        defer { unwritten.remove() }
        _ = unwritten.writer.append(encodedLines: older[...], count: 1, session: "s0")
        try unwritten.place(killed.file)
        #expect(unwritten.replay() == LedgerQueue.Replay(lines: killed.lines.count), "seed \(seed)")
        #expect(unwritten.ledgerBytes() == older + all, "seed \(seed)")
    }

    /// The same by hand, a run of two lines in the middle of a later lap of the ring.
    @Test func aHandMadeRunAtTheLedgersEndIsNotWrittenTwice() throws {
        let lines = (0..<5).map { LedgerQueueTests.rawLine($0, length: 40 + 13 * $0) }
        var image = LedgerQueueImage()
        let start = 5 * image.capacity + 1_024
        var ends = [start]
        for line in lines { ends.append(image.entry(line, at: ends.last ?? start)) }
        image.span(tail: start, head: ends[5])
        image[LedgerQueue.Field.writing] = ends[2]
        let next = try LedgerReplayTarget()
        defer { next.remove() }
        _ = next.writer.append(encodedLines: (lines[0] + lines[1])[...], count: 2, session: "s0")
        try next.place(image.bytes)
        #expect(next.replay() == LedgerQueue.Replay(lines: 3, runAlreadyWritten: true))
        #expect(next.ledgerBytes() == lines.flatMap { $0 })
        let emptied = LedgerQueueImage(bytes: next.queueBytes())
        #expect(emptied[LedgerQueue.Field.tail] == ends[5] && emptied[LedgerQueue.Field.writing] == ends[5])
        #expect(emptied[LedgerQueue.Field.head] == ends[5])
    }

    /// An entry still being copied (bit 31) was never promised: skipped and counted. A reservation
    /// whose word was never stored is zeros: stepped over, 8 bytes at a time, to the next entry.
    @Test func replaySkipsAnUnfinishedEntryAndStepsOverAWordNeverStored() throws {
        let lines = (0..<3).map { LedgerQueueTests.rawLine($0, length: 50) }
        var image = LedgerQueueImage()
        let start = 2 * image.capacity + 512
        var position = image.entry(lines[0], at: start)
        position = image.entry(lines[1], at: position, copying: true)
        position += LedgerQueue.entryBytes(30)
        position = image.entry(lines[2], at: position)
        image.span(tail: start, head: position)
        let next = try LedgerReplayTarget()
        defer { next.remove() }
        try next.place(image.bytes)
        #expect(
            next.replay()
                == LedgerQueue.Replay(lines: 2, unfinished: 1, unreadableBytes: LedgerQueue.entryBytes(30)))
        #expect(next.ledgerBytes() == lines[0] + lines[2])
    }

    /// A committed entry whose checksum fails is stepped over like unreadable bytes; the next
    /// entry is read.
    @Test func replayStepsOverAnEntryWhoseChecksumFails() throws {
        let lines = (0..<3).map { LedgerQueueTests.rawLine($0, length: 70) }
        var image = LedgerQueueImage(capacity: 4_096)
        var position = image.entry(lines[0], at: 0)
        position = image.entry(lines[1], at: position, checksum: 0xDEAD_BEEF)
        position = image.entry(lines[2], at: position)
        image.span(tail: 0, head: position)
        let next = try LedgerReplayTarget()
        defer { next.remove() }
        try next.place(image.bytes)
        #expect(next.replay() == LedgerQueue.Replay(lines: 2, unreadableBytes: LedgerQueue.entryBytes(70)))
        #expect(next.ledgerBytes() == lines[0] + lines[2])
    }

    /// An entry that would not fit before the ring's end follows a skip word, at the next lap.
    @Test func replayFollowsASkipWordToTheRingsStart() throws {
        let short = LedgerQueueTests.rawLine(0, length: 16)
        let long = LedgerQueueTests.rawLine(1, length: 30)
        var image = LedgerQueueImage(capacity: 4_096)
        let start = 3 * image.capacity - 40
        var position = image.entry(short, at: start)
        position = image.skip(at: position)
        #expect(position == 3 * image.capacity)
        position = image.entry(long, at: position)
        image.span(tail: start, head: position)
        let next = try LedgerReplayTarget()
        defer { next.remove() }
        try next.place(image.bytes)
        #expect(next.replay() == LedgerQueue.Replay(lines: 2))
        #expect(next.ledgerBytes() == short + long)
    }

    /// A file that is not a queue this version reads is left as it is, and nothing is written.
    @Test func replayLeavesAFileItDoesNotReadAsItIs() throws {
        var valid = LedgerQueueImage(capacity: 4_096)
        let line = LedgerQueueTests.rawLine(0, length: 40)
        valid.span(tail: 0, head: valid.entry(line, at: 0))
        valid[LedgerQueue.Field.dropped] = 3
        var files: [(String, [UInt8])] = []
        var magic = valid
        magic.bytes[7] = UInt8(ascii: "2")
        files.append(("magic", magic.bytes))
        var version = valid
        version.store(2, at: LedgerQueue.Field.version)
        files.append(("version", version.bytes))
        var capacity = valid
        capacity[LedgerQueue.Field.capacity] = 8_192
        files.append(("capacity", capacity.bytes))
        files.append(("short", Array(valid.bytes.prefix(LedgerQueue.headerBytes + 56))))
        for (name, bytes) in files {
            let next = try LedgerReplayTarget("queue-unread-\(name)")
            defer { next.remove() }
            try next.place(bytes)
            #expect(next.replay() == nil, "\(name)")
            #expect(next.queueBytes() == bytes, "\(name): the file was changed")
            #expect(next.ledgerBytes().isEmpty, "\(name)")
        }
        let missing = try LedgerReplayTarget("queue-unread-missing")
        defer { missing.remove() }
        #expect(missing.replay() == nil)
        try missing.place(valid.bytes)
        #expect(missing.replay() == LedgerQueue.Replay(lines: 1, dropped: 3), "the valid file the others came from")
    }

    /// Replay promises that any bytes are read without a crash: a seeded fuzz of damaged and
    /// random files, in a child process so that a crash fails this test, not the whole run.
    @Test func replayNeverCrashesOnDamagedOrRandomFiles() async throws {
        let seed = SeededRandom.makeSeed()
        let scratch = try TemporaryDirectory("queue-replay-fuzz-log")
        defer { scratch.remove() }
        let log = scratch.file("cases").path
        let result = await #expect(processExitsWith: .success, "seed \(seed)") {
            [seed = seed as UInt64, log = log as String] in
            let ran = try LedgerQueueReplayFuzz.run(seed: seed, iterations: 3_000, seconds: 6, log: log)
            print("replay fuzz, seed \(seed): \(ran) files replayed")
        }
        if result == nil {
            let cases = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            let message = "seed \(seed): replay died on " + (cases.split(separator: "\n").last.map(String.init) ?? "?")
            Issue.record("\(message)")
        }
    }

    /// Pinned from the fuzz: `head` and `tail` at the top of their range, where a position plus 8
    /// would overflow. Nothing is read from an empty span.
    @Test func replaySurvivesHeadAndTailAtTheTopOfTheirRange() async {
        await #expect(processExitsWith: .success) {
            var image = LedgerQueueImage(capacity: 4_096)
            image.span(tail: UInt64.max - 7, head: UInt64.max - 7)
            let replay = try LedgerQueueReplayFuzz.replayOnce(image.bytes)
            precondition(replay == LedgerQueue.Replay(), "\(String(describing: replay))")
        }
    }

    /// Pinned from the fuzz: a `tail` that is not a multiple of 8, so an entry word would be read
    /// misaligned (3) or across the ring's end (4,094). What follows is counted as unreadable, and
    /// no line is written.
    @Test(arguments: [3, 4_094] as [UInt64])
    func replaySurvivesATailThatIsNotAMultipleOf8(tail: UInt64) async {
        await #expect(processExitsWith: .success, "tail \(tail)") { [tail = tail as UInt64] in
            var image = LedgerQueueImage(capacity: 4_096)
            image.span(tail: tail, head: tail + 64)
            let replay = try LedgerQueueReplayFuzz.replayOnce(image.bytes)
            precondition(replay?.lines == 0 && replay?.unreadableBytes ?? 0 > 0, "\(String(describing: replay))")
        }
    }
}

/// Damaged and random queue files for ``LedgerQueue/replay(path:into:session:)``.
enum LedgerQueueReplayFuzz {
    /// Replays `bytes` as a queue file into a fresh ledger.
    static func replayOnce(_ bytes: [UInt8]) throws -> LedgerQueue.Replay? {
        let target = try LedgerReplayTarget("queue-replay-once")
        defer { target.remove() }
        try target.place(bytes)
        return target.replay()
    }

    /// Replays up to `iterations` files (or for `seconds`) into one ledger; each case is appended
    /// to `log` first, so a crash names it. Exits with status 3 when a replayed file replays to
    /// anything but an empty queue a second time. Returns how many files were replayed.
    static func run(seed: UInt64, iterations: Int, seconds: Double, log: String) throws -> Int {
        var random = SeededRandom(seed: seed)
        let target = try LedgerReplayTarget("queue-replay-fuzz", capBytes: 256 * 1024)
        defer { target.remove() }
        let logFD = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        defer { close(logFD) }
        func say(_ text: String) {
            _ = Array((text + "\n").utf8).withUnsafeBytes { write(logFD, $0.baseAddress, $0.count) }
        }
        let deadline = monotonicSeconds() + seconds
        var ran = 0
        while ran < iterations, monotonicSeconds() < deadline {
            let (bytes, description) = damagedFile(&random)
            say("case \(ran): \(description)")
            try target.place(bytes)
            let first = target.replay()
            let second = target.replay()
            if first != nil, second != LedgerQueue.Replay() {
                say("case \(ran): a second replay found \(String(describing: second))")
                exit(3)
            }
            ran += 1
        }
        return ran
    }

    /// A valid queue: entries from a random position of a random lap, some still being copied,
    /// some never stored, a skip where an entry would cross the ring's end, and a run in flight.
    static func validImage(_ random: inout SeededRandom) -> LedgerQueueImage {
        let capacity = [64, 4_096, 8_192, 65_536][Int(random.next() % 4)]
        var image = LedgerQueueImage(capacity: capacity)
        let ring = UInt64(capacity)
        let start =
            UInt64.random(in: 0...4, using: &random) * ring + UInt64.random(in: 0..<ring / 8, using: &random) * 8
        let fill = UInt64.random(in: 0...ring, using: &random)
        var position = start
        var ends = [start]
        while true {
            let length = Int.random(in: 1...min(400, capacity / 2 - 8), using: &random)
            let need = LedgerQueue.entryBytes(length)
            let skip = ring - position % ring < need ? ring - position % ring : 0
            guard position - start + skip + need <= fill else { break }
            if skip > 0 { position = image.skip(at: position) }
            var line = noise(length - 1, &random).map { 32 + $0 % 95 }
            line.append(UInt8(ascii: "\n"))
            switch random.next() % 20 {
            case 0: position = image.entry(line, at: position, copying: true)
            case 1: position += need
            default: position = image.entry(line, at: position)
            }
            ends.append(position)
        }
        image.span(tail: start, head: position)
        image[LedgerQueue.Field.writing] = ends[Int(random.next() % UInt64(ends.count))]
        image[LedgerQueue.Field.dropped] = random.next() % 3 == 0 ? random.next() % 100 : 0
        return image
    }

    /// `count` random bytes, eight from each draw.
    static func noise(_ count: Int, _ random: inout SeededRandom) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: (count + 7) / 8 * 8)
        bytes.withUnsafeMutableBytes { raw in
            for offset in stride(from: 0, to: raw.count, by: 8) {
                raw.storeBytes(of: random.next(), toByteOffset: offset, as: UInt64.self)
            }
        }
        return Array(bytes.prefix(count))
    }

    /// Values a damaged header field might hold, around the ring's size and the ends of `UInt64`.
    static func interesting(_ random: inout SeededRandom, capacity: UInt64) -> UInt64 {
        let values: [UInt64] = [
            0, 1, 3, 4, 7, 8, capacity &- 2, capacity &- 1, capacity, capacity + 8, 2 * capacity, 1 << 31, 1 << 32,
            1 << 63, UInt64.max - capacity, UInt64.max - 8, UInt64.max - 7, UInt64.max - 1, UInt64.max, random.next(),
        ]
        return values[Int(random.next() % UInt64(values.count))]
    }

    /// A damaged or random file and what was done to it.
    static func damagedFile(_ random: inout SeededRandom) -> (bytes: [UInt8], description: String) {
        var image = validImage(&random)
        let capacity = image.capacity
        let fields = [
            LedgerQueue.Field.head, LedgerQueue.Field.tail, LedgerQueue.Field.writing, LedgerQueue.Field.dropped,
        ]
        switch random.next() % 7 {
        case 0:
            let flips = Int.random(in: 1...16, using: &random)
            for _ in 0..<flips {
                image.bytes[Int(random.next() % UInt64(image.bytes.count))] = UInt8.random(in: 0...255, using: &random)
            }
            return (image.bytes, "\(flips) random bytes of a \(capacity)-byte ring")
        case 1:
            var set: [String] = []
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let field = random.next() % 6 == 0 ? LedgerQueue.Field.capacity : fields[Int(random.next() % 4)]
                image[field] = interesting(&random, capacity: capacity)
                set.append("[\(field)]=\(image[field])")
            }
            return (image.bytes, "header \(set.joined(separator: " ")) of a \(capacity)-byte ring")
        case 2:
            // A span that passes the header's checks, from a damaged tail.
            let tail = interesting(&random, capacity: capacity) &+ random.next() % 16
            let head = tail &+ random.next() % (capacity + 1)
            image.span(tail: tail, head: head)
            image[LedgerQueue.Field.writing] = tail &+ random.next() % (capacity + 1)
            return (image.bytes, "tail \(tail) head \(head) writing \(image[LedgerQueue.Field.writing]) of \(capacity)")
        case 3:
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                let offset = LedgerQueue.headerBytes + Int(random.next() % (capacity / 8)) * 8
                let words: [UInt32] = [
                    0, 1, 7, 8, UInt32(capacity / 2), UInt32(capacity), 0x7FFF_FFFF, LedgerQueue.copyingBit | 24,
                    LedgerQueue.copyingBit, LedgerQueue.skipWord, UInt32(truncatingIfNeeded: random.next()),
                ]
                image.store(words[Int(random.next() % UInt64(words.count))], at: offset)
            }
            return (image.bytes, "damaged entry words of a \(capacity)-byte ring")
        case 4:
            let length = LedgerQueue.headerBytes + Int(random.next() % (2 * capacity + 128))
            var bytes = Array(image.bytes.prefix(length))
            bytes += noise(length - bytes.count, &random)
            if random.next() % 2 == 0 {
                var resized = LedgerQueueImage(bytes: bytes)
                resized[LedgerQueue.Field.capacity] = UInt64(length - LedgerQueue.headerBytes)
                bytes = resized.bytes
            }
            return (bytes, "\(length) bytes from a \(capacity)-byte ring's file")
        case 5:
            let length = Int(random.next() % 70_000)
            return (noise(length, &random), "\(length) random bytes")
        default:
            let length = LedgerQueue.headerBytes + 64 + Int(random.next() % 8_192) * 8
            var noisy = LedgerQueueImage(bytes: noise(length, &random))
            noisy[LedgerQueue.Field.magic] = LedgerQueue.magic
            noisy.store(LedgerQueue.version, at: LedgerQueue.Field.version)
            noisy[LedgerQueue.Field.capacity] = UInt64(length - LedgerQueue.headerBytes)
            return (noisy.bytes, "\(length) random bytes behind a valid header")
        }
    }
}

/// A real SIGKILL in the middle of an 8-thread burst (`perf-test-child burst-kill`), then the
/// next start on the same directory: every end that had returned is in the ledger or counted.
@Suite struct LedgerQueueKillTests {
    static let threads = 8

    static func acknowledged(_ file: URL) throws -> [Int] {
        let bytes = try Data(contentsOf: file)
        return bytes.withUnsafeBytes { raw in
            (0..<threads).map { Int(raw.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self)) }
        }
    }

    @Test func everyEndAcknowledgedBeforeASIGKILLIsInTheLedgerAfterTheNextStart() throws {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        let scratch = try TemporaryDirectory("queue-kill")
        defer { scratch.remove() }
        let data = scratch.file("data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let acks = scratch.file("acks")
        var acknowledged: [[Int]] = []
        var sessionRound: [String: Int] = [:]
        for round in 0..<3 {
            try Data(count: Self.threads * 8).write(to: acks)
            let child = try ChildProcess(
                executable: BuildProducts.testChild, arguments: ["burst-kill", "run", data.path, acks.path, "\(round)"])
            let lines = try #require(child.readLines(until: { $0 == "ready" }, timeoutSeconds: 60), "seed \(seed)")
            // Killed once the threads have had a seeded number of ends return between them.
            let target = Int.random(in: 8...3_000, using: &random)
            #expect(pollUntil(seconds: 60) { ((try? Self.acknowledged(acks)) ?? []).reduce(0, +) >= target })
            child.send(SIGKILL)
            #expect(ChildProcess.terminatingSignal(child.wait()) == SIGKILL, "seed \(seed): round \(round)")
            acknowledged.append(try Self.acknowledged(acks))
            let next = try ChildProcess.run(
                BuildProducts.testChild, ["burst-kill", "recover", data.path], timeoutSeconds: 120)
            #expect(ChildProcess.exitedNormally(next.status) && ChildProcess.exitCode(next.status) == 0, "seed \(seed)")
            for line in lines + next.lines where line.hasPrefix("session ") {
                sessionRound[String(line.dropFirst("session ".count))] = round
            }
        }
        var found = Array(repeating: Array(repeating: Set<Int>(), count: Self.threads), count: acknowledged.count)
        var dropped = Array(repeating: 0, count: acknowledged.count)
        var duplicates = 0
        try LedgerReader(directory: data).forEachEvent { event in
            if event.kind == .dropped, let round = sessionRound[event.session] { dropped[round] += event.count ?? 0 }
            guard event.kind == .span, event.name == "burst.kill", let detail = event.detail else { return }
            let parts = detail.split(separator: "-").map { Int($0.dropFirst()) }
            guard parts.count == 3, let thread = parts[0], let round = parts[1], let index = parts[2],
                acknowledged.indices.contains(round), found[round].indices.contains(thread)
            else { return }
            if !found[round][thread].insert(index).inserted { duplicates += 1 }
        }
        for round in acknowledged.indices {
            let missing = (0..<Self.threads).reduce(0) { sum, thread in
                sum + (0..<acknowledged[round][thread]).filter { !found[round][thread].contains($0) }.count
            }
            #expect(
                missing <= dropped[round],
                "seed \(seed): round \(round): \(missing) acknowledged ends missing, \(dropped[round]) counted")
        }
        let totals = acknowledged.map { $0.reduce(0, +) }
        print("kill test, seed \(seed): acknowledged \(totals), dropped \(dropped), duplicates \(duplicates)")
    }
}
