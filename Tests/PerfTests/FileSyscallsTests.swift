// The module's syscall seam: the reader and the directory helpers report injected failures with
// the path and errno, and the seam's own semantics (EEXIST is success for mkdir) hold.
#if DEBUG
    import Foundation
    import Glibc
    import PerfTestSupport
    import Testing

    @testable import Perf

    @Suite struct FileSyscallsTests {
        @Test(arguments: [EIO, EACCES])
        func aFailedReadIsAnErrorNamingTheFile(errno: Int32) throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let writer = try LedgerWriter(directory: directory.url, capBytes: 1 << 20)
            try writer.append(.sampleSpan(sequence: 0))
            writer.close()
            let path = directory.url.path + "/" + LedgerWriter.fileName
            let faults = SyscallFaultInjector()
            faults.fail(.read, 1, errno: errno)
            var lines = 0
            #expect {
                _ = try LedgerReader.streamLines(
                    path: path, maximumLineBytes: 1 << 16, syscalls: FileSyscalls(faults: faults)
                ) { _ in lines += 1 }
            } throws: { error in
                (error as? LedgerError)?.errno == errno
                    && (error as? LedgerError)?.description.contains(path) == true
            }
            #expect(lines == 0)
            // Without the fault the same file reads: the failure was the injected one.
            let damage = try LedgerReader.streamLines(path: path, maximumLineBytes: 1 << 16) { _ in lines += 1 }
            #expect(lines == 1 && damage.oversizedLines == 0 && !damage.tornTail)
        }

        @Test func makingAnExistingDirectoryIsSuccessAndAnInjectedFailureIsNot() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            #expect(FileSyscalls.live.makeDirectory(directory.url.path, mode: 0o700) == .success(0))
            let faults = SyscallFaultInjector()
            faults.fail(.mkdir, 1, errno: ENOSPC)
            let seam = FileSyscalls(faults: faults)
            #expect(seam.makeDirectory(directory.url.path + "/new", mode: 0o700) == .failure(ENOSPC))
            #expect(seam.makeDirectory(directory.url.path + "/new", mode: 0o700) == .success(0))
            #expect(FileSyscalls.live.status(directory.url.path + "/new").map(\.isDirectory) == .success(true))
        }

        @Test func listingADirectorySkipsDotEntriesAndReportsAMissingOne() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            for name in ["b", "a", ".hidden"] {
                #expect(FileManager.default.createFile(atPath: directory.url.path + "/" + name, contents: Data()))
            }
            let names = try FileSyscalls.live.listDirectory(directory.url.path).get()
            #expect(names.sorted() == [".hidden", "a", "b"])
            guard case .failure(let error) = FileSyscalls.live.listDirectory(directory.url.path + "/absent") else {
                Issue.record("an absent directory listed")
                return
            }
            #expect(error.errno == ENOENT)
        }

        @Test(arguments: [SyscallFaultInjector.Operation.open, .rename])
        func aReportThatCannotBeWrittenLeavesNothingBehind(failing operation: SyscallFaultInjector.Operation) throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let path = directory.url.path + "/performance-report.json"
            try ReportFile.write(Array("old".utf8), to: path)
            let faults = SyscallFaultInjector()
            faults.fail(operation, 1, errno: EACCES)
            // Either way the error names the report, not the temporary file.
            #expect(throws: Perf.ReportError(.writeFailed, path: path, Perf.ReportError.describe(errno: EACCES))) {
                try ReportFile.writeAtomically(
                    Array("new".utf8), to: path, temporary: path + ".tmp", mode: 0o644,
                    syscalls: FileSyscalls(faults: faults))
            }
            // The old report is whole and no temporary file is left.
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "old")
            #expect(try FileSyscalls.live.listDirectory(directory.url.path).get() == ["performance-report.json"])
        }

        @Test func aFullDiskMidReportRemovesTheTemporaryAndAShortWriteIsCompleted() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let path = directory.url.path + "/report.json"
            let bytes = [UInt8](repeating: UInt8(ascii: "x"), count: 10_000)
            let faults = SyscallFaultInjector()
            faults.failWrites(1, errno: ENOSPC)
            #expect(throws: Perf.ReportError.self) {
                try ReportFile.writeAtomically(
                    bytes, to: path, temporary: path + ".tmp", mode: 0o644, syscalls: FileSyscalls(faults: faults))
            }
            #expect(try FileSyscalls.live.listDirectory(directory.url.path).get().isEmpty)
            faults.shortWrite()
            try ReportFile.writeAtomically(
                bytes, to: path, temporary: path + ".tmp", mode: 0o644, syscalls: FileSyscalls(faults: faults))
            #expect(ReportFile.read(path, limit: 1 << 20) == .success(bytes))
        }

        @Test func aFailedReadOfAReportNamesTheFile() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let path = directory.url.path + "/report.json"
            try ReportFile.write(Array("{}".utf8), to: path)
            let faults = SyscallFaultInjector()
            faults.fail(.read, 1, errno: EIO)
            let result = ReportFile.read(path, limit: 1 << 20, syscalls: FileSyscalls(faults: faults))
            #expect(
                result == .failure(Perf.ReportError(.unreadable, path: path, Perf.ReportError.describe(errno: EIO))))
            #expect(
                ReportFile.read(path, limit: 1)
                    == .failure(Perf.ReportError(.invalidReport, path: path, "larger than 0 MiB")), "the limit holds")
        }

        /// A data directory whose creation fails (a permission root never meets) names the path and
        /// the errno in words, and leaves nothing behind.
        @Test func aDataDirectoryThatCannotBeCreatedSaysWhy() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let target = directory.url.appendingPathComponent("perf")
            let faults = SyscallFaultInjector()
            faults.fail(.mkdir, 1, errno: EACCES)
            let expected = DataDirectory.Failure(
                directory: target.path, step: .create, path: target.path, errno: EACCES)
            #expect(throws: expected) { try DataDirectory.prepare(target, syscalls: FileSyscalls(faults: faults)) }
            let reason = String(cString: strerror(EACCES)).lowercased()
            #expect(expected.description == "cannot create it (\(reason), errno \(EACCES))")
            #expect(!FileManager.default.fileExists(atPath: target.path))
            try DataDirectory.prepare(target, syscalls: FileSyscalls(faults: faults))
            #expect(FileManager.default.fileExists(atPath: target.path), "the fault was one call only")
        }
    }
#endif
