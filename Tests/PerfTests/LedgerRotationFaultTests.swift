// A rotation that fails (injected in debug builds): no file of lines is lost, recording goes on
// past the cap up to a ceiling, attempts back off, and the problem is said once. Persistent
// write failures are said once, and the gap left at close gets its `dropped` line.
#if DEBUG
    import Foundation
    import Glibc
    import PerfTestSupport
    import Synchronization
    import Testing

    @testable import Perf

    @Suite struct LedgerRotationFaultTests {
        /// What a writer said on its report channel (stderr in production).
        final class Messages: Sendable {
            let lines = Mutex<[String]>([])
            var all: [String] { lines.withLock { $0 } }
            var report: @Sendable (String) -> Void { { message in self.lines.withLock { $0.append(message) } } }
        }

        /// A monotonic clock the test moves.
        final class Clock: Sendable {
            let nanos = Atomic<UInt64>(1_000_000_000)
        }

        /// A writer whose clock stands still unless `clock` moves it: the back-off is counted in lines.
        private func writer(
            _ directory: TemporaryDirectory, cap: Int, faults: SyscallFaultInjector, messages: Messages,
            clock: Clock? = nil
        ) throws -> LedgerWriter {
            try LedgerWriter(
                directory: directory.url, capBytes: cap, syscalls: FileSyscalls(faults: faults),
                report: messages.report,
                monotonicNanos: { clock?.nanos.load(ordering: .relaxed) ?? 0 })
        }

        private func sequences(_ url: URL) -> [Int] {
            ledgerLines(url).compactMap { line in
                guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any],
                    object["kind"] as? String == "span"
                else { return nil }
                return object["count"] as? Int
            }
        }

        /// Before: `.prev` was unlinked before the rename, which then failed: lines 0 and 1 were gone.
        @Test(arguments: [[EXDEV, EXDEV], [0, EXDEV]])
        func aFailedRenameKeepsBothFiles(renames: [Int32]) throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let faults = SyscallFaultInjector()
            let messages = Messages()
            let ledger = try writer(directory, cap: lineLength() * 2, faults: faults, messages: messages)
            for sequence in 0..<4 { try ledger.append(.sampleSpan(sequence: sequence)) }
            #expect(sequences(directory.previous) == [0, 1] && sequences(directory.ledger) == [2, 3])
            // [EXDEV, EXDEV]: `.prev` cannot step aside either; [0, EXDEV]: it steps aside and comes back.
            faults.script(.rename, renames)
            try ledger.append(.sampleSpan(sequence: 4))
            #expect(faults.pending(.rename) == 0)
            #expect(sequences(directory.previous) == [0, 1])
            #expect(sequences(directory.ledger) == [2, 3, 4])
            #expect(!FileManager.default.fileExists(atPath: directory.url.path + "/" + LedgerWriter.retiringFileName))
            #expect(messages.all.count == 1)
            #expect(messages.all.first?.contains("errno \(EXDEV)") == true)
            #expect(messages.all.first?.contains(directory.ledger.path) == true)
        }

        /// Before: every append past the cap retried unlink + rename, and every line was dropped
        /// with no `dropped` line and nothing said (77 lines kept, 1,924 lost, 1,926 renames).
        @Test func rotationFailingFromTheStartRecordsUpToTheCeilingBacksOffAndCountsTheRest() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let faults = SyscallFaultInjector()
            let messages = Messages()
            let cap = 16 * 1024
            let ledger = try writer(directory, cap: cap, faults: faults, messages: messages)
            let injected = 100_000
            faults.fail(.rename, injected, errno: EXDEV)
            let appended = 2_000
            var refused = 0
            for sequence in 0..<appended {
                do { try ledger.append(.sampleSpan(sequence: sequence)) } catch { refused += 1 }
            }
            let kept = sequences(directory.ledger)
            #expect(fileSize(directory.ledger) <= 2 * cap && fileSize(directory.ledger) > cap + cap / 2)
            #expect(kept == Array(0..<kept.count))
            #expect(kept.count + refused == appended)
            #expect(!FileManager.default.fileExists(atPath: directory.previous.path))
            // Two renames per attempt (.prev steps aside, the file moves); attempts back off to one
            // in 64 appends: about (2,000 − 154) / 64 + 7 of them, not one per append.
            let attempts = (injected - faults.pending(.rename)) / 2
            #expect(attempts >= 20 && attempts <= 45)
            #expect(messages.all.count == 1)
            #expect(messages.all.first?.contains("cannot rotate") == true)

            // The fault is lifted: within 65 appends rotation works, and the gap is reported exactly.
            faults.clear()
            for sequence in appended..<(appended + 65) {
                do { try ledger.append(.sampleSpan(sequence: sequence)) } catch { refused += 1 }
            }
            #expect(ledger.statistics.rotations == 1)
            let (events, _) = try LedgerReader(directory: directory.url).readAll()
            let dropped = events.filter { $0.kind == .dropped }
            #expect(dropped.map(\.count) == [refused])
            #expect(events.filter { $0.kind == .span }.count + refused == appended + 65)
            #expect(fileSize(directory.ledger) <= cap)
            #expect(messages.all.count == 1)
        }

        /// A writer that writes rarely retries once 10 ms have passed, not after 64 more lines.
        @Test func theBackOffEndsAfterTenMillisecondsWhicheverComesFirst() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let faults = SyscallFaultInjector()
            let clock = Clock()
            let ledger = try writer(
                directory, cap: lineLength() * 4, faults: faults, messages: Messages(), clock: clock)
            for sequence in 0..<4 { try ledger.append(.sampleSpan(sequence: sequence)) }
            // Two attempts fail (two renames each): at line 4, and again at line 6 (back-off 1).
            faults.fail(.rename, 4, errno: EXDEV)
            for sequence in 4..<8 { try ledger.append(.sampleSpan(sequence: sequence)) }
            #expect(faults.pending(.rename) == 0 && ledger.statistics.rotations == 0)
            // The file is at the ceiling and the back-off (2 lines) has a line to go: only the
            // clock can end it now, else line 8 would be refused.
            clock.nanos.add(LedgerWriter.rotationRetryNanos, ordering: .relaxed)
            try ledger.append(.sampleSpan(sequence: 8))
            #expect(ledger.statistics.rotations == 1)
            #expect(sequences(directory.previous) == Array(0..<8) && sequences(directory.ledger) == [8])
        }

        /// Before: nothing was said, and the lines lost at the end of a session had no `dropped` line.
        @Test(arguments: [ENOSPC, EIO])
        func aPersistentWriteFailureIsSaidOnceAndItsGapIsReportedAtClose(errno: Int32) throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let faults = SyscallFaultInjector()
            let messages = Messages()
            let ledger = try writer(directory, cap: 1 << 20, faults: faults, messages: messages)
            try ledger.append(.sampleSpan(sequence: 0))
            faults.failWrites(50, errno: errno)
            for sequence in 1...50 {
                #expect(throws: LedgerError.self) { try ledger.append(.sampleSpan(sequence: sequence)) }
            }
            #expect(messages.all.count == 1)
            #expect(messages.all.first?.contains("errno \(errno)") == true)
            #expect(messages.all.first?.contains(directory.ledger.path) == true)
            ledger.close()
            let (events, _) = try LedgerReader(directory: directory.url).readAll()
            #expect(events.map(\.kind) == [.span, .dropped])
            #expect(events.map(\.count) == [0, 50])
            #expect(messages.all.count == 1)
        }

        @Test func aHealthyWriterSaysNothing() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let messages = Messages()
            let ledger = try writer(
                directory, cap: lineLength() * 3, faults: SyscallFaultInjector(), messages: messages)
            for sequence in 0..<20 { try ledger.append(.sampleSpan(sequence: sequence)) }
            ledger.close()
            #expect(messages.all.isEmpty)
            #expect(ledger.statistics.rotations >= 5 && ledger.statistics.droppedLines == 0)
        }

        private func lineLength() -> Int {
            var bytes: [UInt8] = []
            LedgerEncoder.encodeLine(.sampleSpan(sequence: 0), into: &bytes)
            return bytes.count
        }
    }
#endif
