// The ledger's crash-durable queue while the process lives: a lone emitter's lines are in the file
// when submit returns, a burst from many threads through the smallest ring writes every line it
// accepted once and in order, and counts every line it refused in a `dropped` line.
import CPerfShims
import Foundation
import PerfCore
import PerfTestSupport
import Synchronization
import Testing

@testable import Perf

/// A queue mapped in a fresh directory, with the writer of that directory's ledger.
struct LedgerQueueRig: Sendable {
    static let session = "s-queue"
    let directory: TemporaryDirectory
    let writer: LedgerWriter
    let queue: LedgerQueue

    init(_ label: String = #function, backlogBytes: Int = 64 * 1024, syscalls: FileSyscalls = FileSyscalls()) throws {
        directory = try TemporaryDirectory(label)
        writer = try LedgerWriter(directory: directory.url, capBytes: 1 << 30, syscalls: syscalls, report: { _ in })
        queue = try #require(
            LedgerQueue.make(
                path: directory.file(LedgerQueue.fileName).path, backlogBytes: backlogBytes, writer: writer,
                sessionID: Self.session))
        #expect(queue.path != nil, "the queue fell back to anonymous memory")
    }

    var queuePath: String { directory.file(LedgerQueue.fileName).path }

    @discardableResult
    func submit(_ line: [UInt8]) -> Bool { line.withUnsafeBytes { queue.submit($0) } }

    func header(_ field: Int) -> UInt64 { perf_atomic_load_u64_acquire(queue.word64(field)) }

    func ledgerBytes() -> [UInt8] { (try? Data(contentsOf: directory.ledger)).map { Array($0) } ?? [] }

    func remove() {
        writer.close()
        directory.remove()
    }

    /// Runs `body` while the drain is stuck in the writer: a helper thread submits `first`, takes
    /// the drain, and waits for the writer's state lock, which this thread holds until `body`
    /// returns. Lines `body` submits stay queued (or are refused) meanwhile; the file keeps what
    /// it held before. Returns once the helper's submit has returned.
    func whileDrainIsHeld(first: [UInt8], _ body: () throws -> Void) throws {
        let helperDone = DispatchSemaphore(value: 0)
        try writer.state.withLock { _ in
            let rig = self
            Thread {
                rig.submit(first)
                helperDone.signal()
            }.start()
            // `writing` passes `tail` when a drain has taken a run and is about to write it.
            try #require(
                pollUntil(seconds: 30) { header(LedgerQueue.Field.writing) > header(LedgerQueue.Field.tail) },
                "no drain took the first line")
            try body()
        }
        #expect(helperDone.wait(timeout: .now() + 60) == .success, "the helper's submit never returned")
    }

    /// A numbered ledger line of `thread`: a span whose `count` is `index`, padded with `padding`
    /// bytes. (Not `extra["thread"]`: `thread` is a schema key, so the encoder would drop it.)
    static func numberedLine(thread: Int, index: Int, padding: Int) -> [UInt8] {
        var event = LedgerEvent(kind: .span, name: "queue.line", session: session, timestampMs: 1_796_216_400_000)
        event.count = index
        event.extra["emitter"] = .int(Int64(thread))
        event.extra["pad"] = .string(String(repeating: "p", count: padding))
        var line: [UInt8] = []
        LedgerEncoder.encodeLine(event, into: &line)
        return line
    }
}

/// Each submitting thread's lines and the indices of those `submit` accepted, gathered from the threads.
final class LedgerQueueRuns: Sendable {
    struct Run: Sendable {
        var lines: [[UInt8]] = []
        var accepted: [Int] = []
    }

    private let runs = Mutex<[Int: Run]>([:])

    func record(thread: Int, _ run: Run) { runs.withLock { $0[thread] = run } }

    func lines(threads: Int) -> [[[UInt8]]] { runs.withLock { runs in (0..<threads).map { runs[$0]?.lines ?? [] } } }

    func accepted(threads: Int) -> [[Int]] {
        runs.withLock { runs in (0..<threads).map { runs[$0]?.accepted ?? [] } }
    }
}

/// What the second thread of the linger test saw when its `submit` returned.
final class SecondSubmit: Sendable {
    private let state = Mutex<(writes: Int, endNanos: UInt64)>((0, 0))

    func record(writes: Int, endNanos: UInt64) { state.withLock { $0 = (writes, endNanos) } }

    var value: (writes: Int, endNanos: UInt64) { state.withLock { $0 } }
}

/// What a ledger file holds after numbered lines went through a queue: each thread's indices in
/// file order, and the `dropped` lines.
struct LedgerQueueAudit {
    var indices: [Int: [Int]] = [:]
    var droppedByCause: [String: Int] = [:]
    var droppedLines = 0
    var droppedSessions: Set<String> = []
    /// Lines that are neither a submitted line byte for byte nor a `dropped` line.
    var strangers = 0
    var endsWithNewline = true

    /// `expected` maps each submitted line (without its `\n`) to its thread and index.
    init(file: [UInt8], expected: [ArraySlice<UInt8>: (thread: Int, index: Int)]) {
        endsWithNewline = file.isEmpty || file.last == UInt8(ascii: "\n")
        for line in file.split(separator: UInt8(ascii: "\n")) {
            if let origin = expected[line] {
                indices[origin.thread, default: []].append(origin.index)
            } else if let event = Array(line).withUnsafeBufferPointer({ LedgerEvent.parse(line: $0) }),
                event.kind == .dropped
            {
                droppedLines += 1
                droppedSessions.insert(event.session)
                if case .string(let cause)? = event.extra["cause"] {
                    droppedByCause[cause, default: 0] += event.count ?? 0
                } else {
                    droppedByCause["unstated", default: 0] += event.count ?? 0
                }
            } else {
                strangers += 1
            }
        }
    }

    var backlogDrops: Int { droppedByCause[DropCause.backlog.rawValue] ?? 0 }

    /// Every accepted line is in the file once, in its thread's order, no refused line is, and the
    /// refused lines are counted exactly in `dropped` lines of the backlog cause.
    static func expectExact(
        rig: LedgerQueueRig, lines: [[[UInt8]]], accepted: [[Int]], seed: UInt64,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        var expected: [ArraySlice<UInt8>: (thread: Int, index: Int)] = [:]
        for (thread, threadLines) in lines.enumerated() {
            for (index, line) in threadLines.enumerated() { expected[line.dropLast()] = (thread, index) }
        }
        let audit = LedgerQueueAudit(file: rig.ledgerBytes(), expected: expected)
        let submitted = lines.reduce(0) { $0 + $1.count }
        #expect(expected.count == submitted, "two submitted lines are the same bytes", sourceLocation: sourceLocation)
        let acceptedCount = accepted.reduce(0) { $0 + $1.count }
        #expect(audit.endsWithNewline && audit.strangers == 0, "seed \(seed): \(audit)", sourceLocation: sourceLocation)
        for thread in lines.indices where audit.indices[thread, default: []] != accepted[thread] {
            let found = audit.indices[thread, default: []]
            let differsAt = zip(found, accepted[thread]).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            let message =
                "seed \(seed): thread \(thread): \(found.count) lines in the file, \(accepted[thread].count) accepted; "
                + "first difference at \(differsAt ?? min(found.count, accepted[thread].count))"
            Issue.record("\(message)", sourceLocation: sourceLocation)
        }
        #expect(
            Set(audit.droppedByCause.keys).isSubset(of: [DropCause.backlog.rawValue]), "seed \(seed): \(audit)",
            sourceLocation: sourceLocation)
        #expect(
            acceptedCount + audit.backlogDrops == submitted,
            "seed \(seed): \(acceptedCount) accepted + \(audit.backlogDrops) told as dropped != \(submitted) submitted",
            sourceLocation: sourceLocation)
        #expect(
            rig.queue.droppedLines.load(ordering: .relaxed) == UInt64(audit.backlogDrops),
            "seed \(seed): droppedLines disagrees with the ledger", sourceLocation: sourceLocation)
        #expect(
            rig.queue.drainedLines.load(ordering: .relaxed) == UInt64(acceptedCount), "seed \(seed)",
            sourceLocation: sourceLocation)
        #expect(
            audit.droppedSessions.isSubset(of: [LedgerQueueRig.session]), "seed \(seed)",
            sourceLocation: sourceLocation)
        // At rest: everything reserved is written and zeroed, no run in flight, no drop untold.
        let head = rig.header(LedgerQueue.Field.head)
        #expect(
            rig.header(LedgerQueue.Field.tail) == head && rig.header(LedgerQueue.Field.writing) == head
                && rig.header(LedgerQueue.Field.dropped) == 0, "seed \(seed)", sourceLocation: sourceLocation)
    }
}

@Suite struct LedgerQueueTests {
    /// `line <index> ` then letters, `length` bytes in all with the `\n`.
    static func rawLine(_ index: Int, length: Int) -> [UInt8] {
        var line = Array("line \(index) ".utf8)
        while line.count < length - 1 { line.append(UInt8(ascii: "a") + UInt8(line.count % 26)) }
        line.append(UInt8(ascii: "\n"))
        return line
    }

    @Test func aLoneEmittersLinesAreInTheFileInOrderWhenSubmitReturns() throws {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        let rig = try LedgerQueueRig()
        defer { rig.remove() }
        var expected: [UInt8] = []
        for index in 0..<300 {
            let line = Self.rawLine(index, length: Int.random(in: 12...4_000, using: &random))
            #expect(rig.submit(line), "seed \(seed): line \(index) refused")
            expected += line
            let file = rig.ledgerBytes()
            guard file == expected else {
                let message =
                    "seed \(seed): after submit of line \(index) returned the file holds \(file.count) bytes, "
                    + "\(expected.count) expected"
                Issue.record("\(message)")
                return
            }
        }
        #expect(UInt64(expected.count) > 3 * rig.queue.capacity, "seed \(seed): the lines did not lap the ring")
        #expect(rig.queue.drainedLines.load(ordering: .relaxed) == 300)
        #expect(rig.queue.droppedLines.load(ordering: .relaxed) == 0)
        let head = rig.header(LedgerQueue.Field.head)
        #expect(rig.header(LedgerQueue.Field.tail) == head && rig.header(LedgerQueue.Field.writing) == head)
    }

    /// A line longer than an emitter writes itself goes to the drain queue: in order, all the same.
    @Test func aLineLongerThanTheInlineDrainIsWrittenInOrderByTheDrainQueue() throws {
        let rig = try LedgerQueueRig()
        defer { rig.remove() }
        let lines = [
            Self.rawLine(0, length: 100), Self.rawLine(1, length: Int(LedgerQueue.inlineDrainBytes) + 4_000),
            Self.rawLine(2, length: 100),
        ]
        for line in lines { #expect(rig.submit(line)) }
        #expect(rig.queue.waitUntilWritten(deadline: Date(timeIntervalSinceNow: 30)))
        #expect(rig.ledgerBytes() == lines.flatMap { $0 })
    }

    @Test func theQueueFileHasTheDocumentedHeader() throws {
        #expect(LedgerQueue.ringBytes(backlogBytes: 1) == 64 * 1024)
        #expect(LedgerQueue.ringBytes(backlogBytes: 100_000) == 102_400)
        let rig = try LedgerQueueRig(backlogBytes: 100_000)
        defer { rig.remove() }
        let lines = [Self.rawLine(0, length: 61), Self.rawLine(1, length: 64)]
        for line in lines { rig.submit(line) }
        let file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: rig.queuePath)))
        #expect(file.count == 4_096 + 102_400)
        #expect(Array(file[0..<8]) == Array("PERFLQ01".utf8))
        file.withUnsafeBytes { raw in
            #expect(raw.loadUnaligned(fromByteOffset: 8, as: UInt32.self) == 1)
            #expect(raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self) == 102_400)
            // Entries take 8 bytes of word and checksum, the line, and zeros to 8: 72 + 72.
            for offset in [24, 32, 40] { #expect(raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self) == 144) }
            #expect(raw.loadUnaligned(fromByteOffset: 48, as: UInt64.self) == 0)
            // Written entries are zeroed, so a later lap never reads an old word.
            #expect(raw[4_096..<4_096 + 144].allSatisfy { $0 == 0 })
        }
        #expect(rig.ledgerBytes() == lines.flatMap { $0 })
    }

    @Test func aQueueWithoutAFileStillWritesItsLines() throws {
        let directory = try TemporaryDirectory("queue-anonymous")
        defer { directory.remove() }
        let writer = try LedgerWriter(
            directory: directory.url, capBytes: 1 << 20, syscalls: FileSyscalls(), report: { _ in })
        defer { writer.close() }
        let queue = try #require(LedgerQueue.make(path: nil, backlogBytes: 0, writer: writer, sessionID: "s"))
        #expect(queue.path == nil)
        let line = Self.rawLine(0, length: 40)
        #expect(line.withUnsafeBytes { queue.submit($0) })
        #expect(try Data(contentsOf: directory.ledger) == Data(line))
    }

    /// Eight threads, the smallest ring, lines up to beyond half the ring: the file holds exactly
    /// the lines `submit` accepted, each thread's in order, and `dropped` lines count the rest.
    @Test(arguments: 0..<4)
    func aBurstFromEightThreadsWritesEveryAcceptedLineOnceAndCountsTheRest(run: Int) throws {
        let seed = SeededRandom.makeSeed("aBurstFromEightThreads run \(run)")
        let threads = 8
        let perThread = 1_500
        let rig = try LedgerQueueRig("queue-burst")
        defer { rig.remove() }
        let start = DispatchSemaphore(value: 0)
        let finished = DispatchGroup()
        let runs = LedgerQueueRuns()
        for thread in 0..<threads {
            finished.enter()
            Thread {
                var random = SeededRandom(seed: seed &+ UInt64(thread) &* 0x9E37_79B9_7F4A_7C15)
                var run = LedgerQueueRuns.Run()
                run.lines = (0..<perThread).map { index in
                    LedgerQueueRig.numberedLine(thread: thread, index: index, padding: Self.padding(&random))
                }
                start.wait()
                for (index, line) in run.lines.enumerated() where rig.submit(line) { run.accepted.append(index) }
                runs.record(thread: thread, run)
                finished.leave()
            }.start()
        }
        for _ in 0..<threads { start.signal() }
        #expect(finished.wait(timeout: .now() + 120) == .success, "seed \(seed): a submitter never finished")
        #expect(rig.queue.waitUntilWritten(deadline: Date(timeIntervalSinceNow: 60)), "seed \(seed)")
        let lines = runs.lines(threads: threads)
        let accepted = runs.accepted(threads: threads)
        LedgerQueueAudit.expectExact(rig: rig, lines: lines, accepted: accepted, seed: seed)
        let refused = lines.reduce(0) { $0 + $1.count } - accepted.reduce(0) { $0 + $1.count }
        let writes = rig.writer.statistics.writeCalls
        print("burst run \(run), seed \(seed): \(refused) of \(threads * perThread) lines refused, \(writes) writes")
    }

    /// Mostly short lines, some near 4 KiB, a few beyond the inline drain, a rare one beyond half
    /// of the 64 KiB ring (always refused).
    static func padding(_ random: inout SeededRandom) -> Int {
        switch random.next() % 1_000 {
        case 0..<2: Int.random(in: 33_000...40_000, using: &random)
        case 2..<12: Int.random(in: 17_000...30_000, using: &random)
        case 12..<150: Int.random(in: 3_850...3_970, using: &random)
        default: Int.random(in: 0...600, using: &random)
        }
    }

    /// While the drain cannot write, lines fill the ring; `submit` refuses exactly those that find
    /// no room (a short line may still fit after a long one was refused), and one `dropped` line
    /// tells their count when the drain moves again.
    @Test func aFullRingRefusesExactlyTheLinesWithoutRoomAndTellsTheirCount() throws {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        let rig = try LedgerQueueRig()
        defer { rig.remove() }
        var lines = [LedgerQueueRig.numberedLine(thread: 0, index: 0, padding: 10)]
        var accepted = [0]
        try rig.whileDrainIsHeld(first: lines[0]) {
            // Every 97th line is longer than half the ring: refused whatever the room.
            var refusedForRoom = 0
            while refusedForRoom < 200 {
                let index = lines.count
                let padding = index % 97 == 0 ? 40_000 : Int.random(in: 0...4_000, using: &random)
                lines.append(LedgerQueueRig.numberedLine(thread: 0, index: index, padding: padding))
                if rig.submit(lines[index]) {
                    accepted.append(index)
                } else if padding < 40_000 {
                    refusedForRoom += 1
                }
                try #require(index < 10_000, "seed \(seed): the ring never filled")
            }
            let refused = UInt64(lines.count - accepted.count)
            #expect(rig.ledgerBytes().isEmpty, "seed \(seed): a line was written while the drain was held")
            #expect(rig.header(LedgerQueue.Field.dropped) == refused, "seed \(seed)")
            #expect(rig.queue.droppedLines.load(ordering: .relaxed) == refused, "seed \(seed)")
            let reserved = rig.header(LedgerQueue.Field.head) - rig.header(LedgerQueue.Field.tail)
            #expect(reserved <= rig.queue.capacity, "seed \(seed)")
        }
        #expect(rig.queue.waitUntilWritten(deadline: Date(timeIntervalSinceNow: 30)), "seed \(seed)")
        LedgerQueueAudit.expectExact(rig: rig, lines: [lines], accepted: [accepted], seed: seed)
        var expected: [ArraySlice<UInt8>: (thread: Int, index: Int)] = [:]
        for (index, line) in lines.enumerated() { expected[line.dropLast()] = (0, index) }
        let audit = LedgerQueueAudit(file: rig.ledgerBytes(), expected: expected)
        #expect(audit.droppedLines == 1, "seed \(seed): the drops were told in \(audit.droppedLines) lines")
        #expect(accepted.count > 10 && lines.count - accepted.count >= 200, "seed \(seed)")
    }

    #if DEBUG
        /// The writer's writes stall (20 ms each) while four threads submit: the ring fills, and
        /// every line is written once in order or counted.
        @Test func whileWritesStallFourThreadsLoseNoLineUncounted() throws {
            let seed = SeededRandom.makeSeed()
            let faults = SyscallFaultInjector()
            let rig = try LedgerQueueRig(syscalls: FileSyscalls(faults: faults))
            defer { rig.remove() }
            faults.stallWrites(nanos: 20_000_000)
            let threads = 4
            let finished = DispatchGroup()
            let runs = LedgerQueueRuns()
            for thread in 0..<threads {
                finished.enter()
                Thread {
                    var random = SeededRandom(seed: seed &+ UInt64(thread))
                    var run = LedgerQueueRuns.Run()
                    // At least 500 lines each, and on until the ring has refused one.
                    while run.lines.count < 500 || rig.queue.droppedLines.load(ordering: .relaxed) == 0,
                        run.lines.count < 200_000
                    {
                        let index = run.lines.count
                        let padding = Int.random(in: 0...1_000, using: &random)
                        run.lines.append(LedgerQueueRig.numberedLine(thread: thread, index: index, padding: padding))
                        if rig.submit(run.lines[index]) { run.accepted.append(index) }
                    }
                    runs.record(thread: thread, run)
                    finished.leave()
                }.start()
            }
            #expect(finished.wait(timeout: .now() + 120) == .success, "seed \(seed): a submitter never finished")
            faults.stallWrites(nanos: 0)
            #expect(rig.queue.waitUntilWritten(deadline: Date(timeIntervalSinceNow: 60)), "seed \(seed)")
            #expect(faults.stalledWrites.load(ordering: .relaxed) > 0, "the writes never stalled")
            #expect(rig.queue.droppedLines.load(ordering: .relaxed) > 0, "seed \(seed): the ring never filled")
            LedgerQueueAudit.expectExact(
                rig: rig, lines: runs.lines(threads: threads), accepted: runs.accepted(threads: threads), seed: seed)
        }
    #endif

    /// While another thread wrote within ``LedgerQueue/lingerNanos``, an emitter leaves its line,
    /// durable in the queue already, for one run a moment later instead of paying a `write(2)`.
    /// Attempts count only when the second `submit` returned within 0.9 ms of the first one's
    /// start: the first write was then under 1 ms old when the second looked, and the delayed run
    /// (1 ms after that look) cannot have run before the second thread read the write count.
    @Test func aSecondThreadWithinTheLingerLeavesItsLineForOneRunAMomentLater() throws {
        let lines = [Self.rawLine(0, length: 80), Self.rawLine(1, length: 80)]
        var inTime = 0
        var writtenInline = 0
        for _ in 0..<50 where inTime < 5 {
            let rig = try LedgerQueueRig("queue-linger")
            defer { rig.remove() }
            let go = DispatchSemaphore(value: 0)
            let done = DispatchSemaphore(value: 0)
            let seen = SecondSubmit()
            Thread {
                go.wait()
                rig.submit(lines[1])
                seen.record(writes: rig.writer.statistics.writeCalls, endNanos: perf_monotonic_ns())
                done.signal()
            }.start()
            let start = perf_monotonic_ns()
            rig.submit(lines[0])
            #expect(rig.writer.statistics.writeCalls == 1, "the first thread did not write its own line")
            go.signal()
            done.wait()
            let (writes, end) = seen.value
            #expect(rig.queue.waitUntilWritten(deadline: Date(timeIntervalSinceNow: 30)))
            #expect(rig.ledgerBytes() == lines[0] + lines[1])
            guard end - start < 900_000 else { continue }
            inTime += 1
            if writes != 1 { writtenInline += 1 }
        }
        #expect(inTime > 0, "the second submit never came within 0.9 ms of the first")
        #expect(
            writtenInline == 0,
            "\(writtenInline) of \(inTime) second lines were written inline though the first write was under 1 ms old")
    }

    /// A clean close removes the file; a close whose deadline passes with lines still queued
    /// leaves it, for the next start to replay.
    @Test func closeRemovesTheFileOnlyWhenEveryLineIsWritten() throws {
        let rig = try LedgerQueueRig()
        defer { rig.remove() }
        for index in 0..<3 { rig.submit(Self.rawLine(index, length: 50)) }
        rig.queue.close(deadline: Date(timeIntervalSinceNow: 30))
        #expect(!FileManager.default.fileExists(atPath: rig.queuePath))
        #expect(rig.ledgerBytes() == (0..<3).flatMap { Self.rawLine($0, length: 50) })

        let held = try LedgerQueueRig("queue-close-held")
        defer { held.remove() }
        try held.whileDrainIsHeld(first: Self.rawLine(0, length: 50)) {
            held.submit(Self.rawLine(1, length: 50))
            held.queue.close(deadline: Date())
            #expect(FileManager.default.fileExists(atPath: held.queuePath), "a queue still holding lines was removed")
        }
        #expect(held.queue.waitUntilWritten(deadline: Date(timeIntervalSinceNow: 30)))
        #expect(held.ledgerBytes() == (0..<2).flatMap { Self.rawLine($0, length: 50) })
    }
}

extension PerfGlobalStateTests {
    @Suite struct LedgerQueueFacadeTests {
        /// The session's queue is `sessions/<id>/ledger.queue` while Perf runs, carries the
        /// over-budget ends to the ledger, and is gone after a clean shutdown.
        @Test func theSessionsQueueFileLivesWhileRunningAndGoesAtShutdown() throws {
            let directory = try TemporaryDirectory("ledger-queue-facade")
            defer { directory.remove() }
            var configuration = Perf.Configuration(
                directory: directory.url, app: Perf.AppInfo(name: "queue-test"), recording: .enabled)
            configuration.ledgerBacklogBytes = 256 * 1024
            Perf.shutdown()
            #expect(Perf.install(configuration, environment: [:], clock: SystemClock(), report: { _ in }))
            defer { Perf.shutdown() }
            let session = try #require(Perf.sessionID)
            let queueFile = directory.url.appendingPathComponent("sessions/\(session)/\(LedgerQueue.fileName)")
            let queue = try #require(PerfState.runtime()?.ledgerQueue)
            #expect(
                queue.path.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath() }
                    == queueFile.resolvingSymlinksInPath())
            for _ in 0..<200 { Perf.begin("queue.facade", slowMs: 0).end() }
            #expect(queue.waitUntilWritten(deadline: Date(timeIntervalSinceNow: 30)))
            let file = try [UInt8](Data(contentsOf: queueFile))
            #expect(file.count == LedgerQueue.headerBytes + 256 * 1024)
            #expect(Array(file.prefix(8)) == Array("PERFLQ01".utf8))
            #expect(queue.drainedLines.load(ordering: .relaxed) >= 200)
            Perf.shutdown()
            #expect(!FileManager.default.fileExists(atPath: queueFile.path), "a clean end left the queue")
            let events = try LedgerReader(directory: directory.url).readAll().events
            #expect(events.filter { $0.kind == .span && $0.name == "queue.facade" }.count == 200)
            #expect(!events.contains { $0.kind == .dropped })
        }
    }
}
