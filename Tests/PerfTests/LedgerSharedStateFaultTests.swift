// Every syscall of the ledger's shared state, failed on purpose through the writer's seam (debug
// builds only): a state that cannot be set up leaves the writer counting alone, a lock or an
// identity that cannot be had is gone on without, and no line is lost either way.
#if DEBUG
    import Foundation
    import Glibc
    import PerfTestSupport
    import Testing

    @testable import Perf

    @Suite struct LedgerSharedStateFaultTests {
        typealias Operation = SyscallFaultInjector.Operation
        static let cap = 2_048

        /// Appends `count` lines of session `w1` and checks the files hold every line they should.
        private func appendAndCheck(
            _ writer: LedgerWriter, _ directory: TemporaryDirectory, count: Int = 40,
            sourceLocation: SourceLocation = #_sourceLocation
        ) throws {
            for sequence in 0..<count { try writer.append(LedgerSharedStateTests.line("w1", sequence)) }
            let check = SharedLedgerCheck(directory: directory.url, cap: Self.cap, sessions: ["w1"], lines: count)
            #expect(check.problems.isEmpty, "\(check.problems) (\(check.summary))", sourceLocation: sourceLocation)
            #expect(writer.statistics.droppedLines == 0, sourceLocation: sourceLocation)
        }

        /// The state file cannot be opened, examined, filled or mapped: the writer counts its file's
        /// size alone, as a single process may, and closes what it opened.
        @Test(arguments: [Operation.open, .fileStatus, .map])
        func aStateThatCannotBeSetUpLeavesTheWriterAlone(operation: Operation) throws {
            let directory = try TemporaryDirectory("ledger-shared-faults")
            defer { directory.remove() }
            let faults = SyscallFaultInjector()
            faults.fail(operation, 1, errno: operation == .map ? ENOMEM : EACCES)
            let writer = try LedgerWriter(
                directory: directory.url, capBytes: Self.cap, syscalls: FileSyscalls(faults: faults))
            #expect(faults.pending(operation) == 0)
            #expect(writer.shared == nil)
            try appendAndCheck(writer, directory)
        }

        @Test func aStateFileThatCannotBeFilledLeavesTheWriterAlone() throws {
            let directory = try TemporaryDirectory("ledger-shared-faults")
            defer { directory.remove() }
            let faults = SyscallFaultInjector()
            faults.failWrites(1, errno: ENOSPC)
            let writer = try LedgerWriter(
                directory: directory.url, capBytes: Self.cap, syscalls: FileSyscalls(faults: faults))
            #expect(writer.shared == nil)
            try appendAndCheck(writer, directory)
        }

        /// An unreadable file-size limit is no limit; a lock that fails (a file system without
        /// flock) is gone on without: the state is shared as usual.
        @Test(arguments: [(Operation.limit, 1), (.lock, 3)])
        func aLimitOrLockThatCannotBeHadIsGoneOnWithout(operation: Operation, times: Int) throws {
            let directory = try TemporaryDirectory("ledger-shared-faults")
            defer { directory.remove() }
            let faults = SyscallFaultInjector()
            faults.fail(operation, times, errno: operation == .lock ? ENOLCK : EPERM)
            let writer = try LedgerWriter(
                directory: directory.url, capBytes: Self.cap, syscalls: FileSyscalls(faults: faults))
            #expect(faults.pending(operation) == 0)
            #expect(writer.shared != nil)
            try appendAndCheck(writer, directory)
        }

        /// The new file's identity cannot be read when it is joined, or the path's when a full
        /// file is to be rotated: the writer goes on, rotating at a later line, and keeps every line.
        @Test(arguments: [(Operation.fileStatus, [0, EIO]), (.pathStatus, [EIO])])
        func anIdentityThatCannotBeReadLosesNoLine(operation: Operation, script: [Int32]) throws {
            let directory = try TemporaryDirectory("ledger-shared-faults")
            defer { directory.remove() }
            let faults = SyscallFaultInjector()
            faults.script(operation, script)
            let writer = try LedgerWriter(
                directory: directory.url, capBytes: Self.cap, syscalls: FileSyscalls(faults: faults))
            #expect(writer.shared != nil)
            try appendAndCheck(writer, directory)
            #expect(faults.pending(operation) == 0)
            #expect(writer.statistics.rotations >= 1)
        }
    }
#endif
