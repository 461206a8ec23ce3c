// The ledger queue's file through the ledger's syscall seam: each step of making it that fails
// leaves a working queue in memory and one message naming the file and the step; a replay whose
// read fails writes nothing and leaves the file for the next start.
import Foundation
import Glibc
import PerfTestSupport
import Testing

@testable import Perf

#if DEBUG
    @Suite struct LedgerQueueFaultTests {
        @Test(arguments: [
            (SyscallFaultInjector.Operation.open, "open"), (.size, "ftruncate"), (.reserve, "fallocate"),
            (.map, "mmap"),
        ])
        func aQueueFileThatCannotBeMadeFallsBackToMemoryAndSaysWhy(
            operation: SyscallFaultInjector.Operation, step: String
        ) throws {
            let directory = try TemporaryDirectory("queue-faults")
            defer { directory.remove() }
            let faults = SyscallFaultInjector()
            let writer = try LedgerWriter(
                directory: directory.url, capBytes: 1 << 20, syscalls: FileSyscalls(faults: faults), report: { _ in })
            defer { writer.close() }
            faults.fail(operation, 1, errno: ENOSPC)
            let path = directory.url.appendingPathComponent("ledger.queue").path
            var problems: [String] = []
            let queue = try #require(
                LedgerQueue.make(path: path, backlogBytes: 64 * 1024, writer: writer, sessionID: "s") {
                    problems.append($0)
                })
            #expect(faults.pending(operation) == 0, "the fault was reached")
            #expect(queue.path == nil, "the queue runs in memory")
            #expect(problems.count == 1 && problems[0].contains(path) && problems[0].contains(step), "\(problems)")
            // The queue still carries lines to the ledger.
            let line = Array("{\"kind\":\"note\"}\n".utf8)
            #expect(line.withUnsafeBytes { queue.submit($0) })
            #expect(queue.waitUntilWritten(deadline: Date(timeIntervalSinceNow: 10)))
            let ledger = try String(
                contentsOf: directory.url.appendingPathComponent(LedgerWriter.fileName), encoding: .utf8)
            #expect(ledger == String(decoding: line, as: UTF8.self))
        }

        @Test func aReplayWhoseReadFailsWritesNothingAndKeepsTheFile() throws {
            let directory = try TemporaryDirectory("queue-replay-fault")
            defer { directory.remove() }
            let path = directory.url.appendingPathComponent("ledger.queue").path
            let first = try LedgerWriter(directory: directory.url, capBytes: 1 << 20)
            defer { first.close() }
            let queue = try #require(
                LedgerQueue.make(path: path, backlogBytes: 64 * 1024, writer: first, sessionID: "s"))
            #expect(queue.path == path)
            let faults = SyscallFaultInjector()
            let next = try LedgerWriter(
                directory: directory.url, capBytes: 1 << 20, syscalls: FileSyscalls(faults: faults), report: { _ in })
            defer { next.close() }
            faults.fail(.read, 1, errno: EIO)
            #expect(LedgerQueue.replay(path: path, into: next, session: "s") == nil)
            #expect(faults.pending(.read) == 0, "the fault was reached")
            #expect(FileManager.default.fileExists(atPath: path), "the file stays for a later start")
        }
    }
#endif
