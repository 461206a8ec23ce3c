// Injected syscall failures (debug builds only): gap reports, short writes, failed rotations.
#if DEBUG
    import Foundation
    import Glibc
    import PerfTestSupport
    import Testing

    @testable import Perf

    @Suite struct LedgerFaultInjectionTests {
        @Test(arguments: [ENOSPC, EIO, EDQUOT])
        func aFailedWriteIsReportedByTheNextLine(errno: Int32) throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let faults = SyscallFaultInjector()
            let writer = try LedgerWriter(
                directory: directory.url, capBytes: 1 << 20, syscalls: FileSyscalls(faults: faults))
            try writer.append(.sampleSpan(sequence: 0))
            faults.failWrites(3, errno: errno)
            for sequence in 1...3 {
                #expect {
                    try writer.append(.sampleSpan(sequence: sequence))
                } throws: { error in
                    (error as? LedgerError)?.errno == errno
                        && (error as? LedgerError)?.description.contains("PERF_DIR") == true
                }
            }
            try writer.append(.sampleSpan(sequence: 4))
            try writer.append(.sampleSpan(sequence: 5))
            let (events, _) = try LedgerReader(directory: directory.url).readAll()
            #expect(events.map(\.kind) == [.span, .dropped, .span, .span])
            #expect(events.map(\.count) == [0, 3, 4, 5])
            #expect(writer.statistics.droppedLines == 3 && writer.statistics.gapReports == 1)
        }

        @Test func aGapReportWaitsForALineItFitsBesideSoTheCapHolds() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let faults = SyscallFaultInjector()
            let cap = lineLength() + 20
            let writer = try LedgerWriter(
                directory: directory.url, capBytes: cap, syscalls: FileSyscalls(faults: faults))
            faults.failWrites(1)
            #expect(throws: LedgerError.self) { try writer.append(.sampleSpan(sequence: 0)) }
            try writer.append(.sampleSpan(sequence: 1))
            try writer.append(.sampleSpan(sequence: 2))
            var small = LedgerEvent(kind: .note, name: "n", session: "s", timestampMs: 0)
            small.count = 3
            try writer.append(small)
            #expect(fileSize(directory.ledger) <= cap && fileSize(directory.previous) <= cap)
            #expect(writer.statistics.gapReports == 1)
            let (events, _) = try LedgerReader(directory: directory.url).readAll()
            #expect(events.map(\.kind) == [.span, .dropped, .note])
        }

        @Test func aShortWriteIsDroppedAndItsFragmentCannotSwallowTheNextLine() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let faults = SyscallFaultInjector()
            let writer = try LedgerWriter(
                directory: directory.url, capBytes: 1 << 20, syscalls: FileSyscalls(faults: faults))
            faults.shortWrite()
            #expect(throws: LedgerError.self) { try writer.append(.sampleSpan(sequence: 0)) }
            try writer.append(.sampleSpan(sequence: 1))
            let (events, summary) = try LedgerReader(directory: directory.url).readAll()
            #expect(events.map(\.kind) == [.dropped, .span])
            #expect(events.map(\.count) == [1, 1])
            #expect(summary.malformedLines == 1)
        }

        /// A failed rotation keeps the line (past the cap) and retries after one more append.
        @Test func aFailedRotationKeepsTheLineAndRetriesAfterBackingOff() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let faults = SyscallFaultInjector()
            let cap = lineLength() * 2
            let writer = try LedgerWriter(
                directory: directory.url, capBytes: cap, syscalls: FileSyscalls(faults: faults), report: { _ in },
                monotonicNanos: { 0 })
            for sequence in 0..<2 { try writer.append(.sampleSpan(sequence: sequence)) }
            // Both renames of the attempt fail: the absent .prev's step aside, and the file's move.
            faults.fail(.rename, 2, errno: EACCES)
            try writer.append(.sampleSpan(sequence: 2))
            try writer.append(.sampleSpan(sequence: 3))
            #expect(writer.statistics.rotations == 0 && fileSize(directory.ledger) == cap * 2)
            try writer.append(.sampleSpan(sequence: 4))
            #expect(writer.statistics.rotations == 1 && writer.statistics.droppedLines == 0)
            let (events, _) = try LedgerReader(directory: directory.url).readAll()
            #expect(events.map(\.kind) == [.span, .span, .span, .span, .span])
            #expect(events.map(\.count) == [0, 1, 2, 3, 4])
        }

        @Test func aFailedOpenAfterRotationKeepsThePreviousFile() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let faults = SyscallFaultInjector()
            let cap = lineLength() * 2
            let writer = try LedgerWriter(
                directory: directory.url, capBytes: cap, syscalls: FileSyscalls(faults: faults))
            for sequence in 0..<2 { try writer.append(.sampleSpan(sequence: sequence)) }
            faults.fail(.open, 1, errno: EMFILE)
            #expect(throws: LedgerError.self) { try writer.append(.sampleSpan(sequence: 2)) }
            try writer.append(.sampleSpan(sequence: 3))
            let (events, _) = try LedgerReader(directory: directory.url).readAll()
            #expect(events.map(\.kind) == [.span, .span, .dropped, .span])
            #expect(events.map(\.count) == [0, 1, 1, 3])
            #expect(fileSize(directory.previous) <= cap && fileSize(directory.ledger) <= cap)
        }

        @Test func aRemovedDirectoryIsRecreatedWithMode0700() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let faults = SyscallFaultInjector()
            let writer = try LedgerWriter(
                directory: directory.url, capBytes: 1 << 20, syscalls: FileSyscalls(faults: faults))
            try FileManager.default.removeItem(at: directory.url)
            faults.failWrites(1, errno: ENOENT)
            #expect(throws: LedgerError.self) { try writer.append(.sampleSpan(sequence: 0)) }
            try writer.append(.sampleSpan(sequence: 1))
            var info = stat()
            #expect(stat(directory.url.path, &info) == 0 && info.st_mode & 0o777 == 0o700)
            let (events, _) = try LedgerReader(directory: directory.url).readAll()
            #expect(events.map(\.kind) == [.dropped, .span])
        }

        private func lineLength() -> Int {
            var bytes: [UInt8] = []
            LedgerEncoder.encodeLine(.sampleSpan(sequence: 0), into: &bytes)
            return bytes.count
        }
    }
#endif
