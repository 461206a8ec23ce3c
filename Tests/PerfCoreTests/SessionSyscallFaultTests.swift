// Every syscall of a session's lock file and index record, failed on purpose through PerfCore's
// seam (debug builds only): a start either goes on another way or fails naming the file and the
// errno, an index write leaves the previous record and no temporary, and nothing crashes.
#if DEBUG
    import Foundation
    import Glibc
    import PerfTestSupport
    import Testing

    @testable import PerfCore

    /// Runs `body` with `plan`'s faults planned for the seam, and checks that every one was reached.
    @discardableResult
    func injectingCoreFaults<R>(
        _ plan: (CoreSyscallFaults) -> Void, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R
    ) rethrows -> R {
        let faults = CoreSyscallFaults()
        plan(faults)
        let result = try CoreSyscallFaults.$current.withValue(faults, operation: body)
        #expect(faults.pendingCount == 0, "a planned fault was never reached", sourceLocation: sourceLocation)
        return result
    }

    @Suite struct SessionSyscallFaultTests {
        typealias Operation = CoreSyscalls.Operation

        private func names(_ scratch: TemporaryDirectory) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: scratch.sessions.path)) ?? []).sorted()
        }

        /// The start's lock file made and locked under a temporary name, then linked: when any of
        /// those fails, it opens and locks the name itself, and the session runs as usual.
        @Test(arguments: [(Operation.open, EACCES), (.lock, ENOLCK), (.link, EPERM)])
        func aLockThatCannotBeMadeLockedIsTakenByOpenThenLock(operation: Operation, errno: Int32) throws {
            let scratch = try TemporaryDirectory("session-faults")
            defer { scratch.remove() }
            let info = SessionSamples.info()
            let session = try injectingCoreFaults({ $0.fail(operation, errno: errno) }) {
                try SessionStore(directory: scratch.url).start(info)
            }
            #expect(names(scratch).contains("\(info.id).lock"))
            #expect(!names(scratch).contains { $0.hasPrefix(".lock-") }, "\(names(scratch))")
            session.end()
            #expect(SessionIndex(dataDirectory: scratch.url).record(id: info.id)?.status == .terminated)
        }

        @Test(arguments: [(Operation.open, EACCES, "cannot open session lock"), (.lock, ENOLCK, "cannot lock")])
        func aLockThatCannotBeTakenFailsTheStartNamingTheFile(
            operation: Operation, errno: Int32, action: String
        ) throws {
            let scratch = try TemporaryDirectory("session-faults")
            defer { scratch.remove() }
            let info = SessionSamples.info()
            let lockPath = scratch.sessions.appendingPathComponent("\(info.id).lock").path
            injectingCoreFaults({ $0.fail(operation, errno: errno, times: 2) }) {
                #expect {
                    _ = try SessionStore(directory: scratch.url).start(info)
                } throws: { error in
                    guard let error = error as? SessionError, error.code == .storage else { return false }
                    return error.message.hasPrefix("\(action) \(lockPath): \(String(cString: strerror(errno)))")
                        && error.message.contains("(errno \(errno))") && error.message.contains("PERF_DIR")
                }
            }
            #expect(!FileManager.default.fileExists(atPath: scratch.sessions.appendingPathComponent(info.id).path))
        }

        /// A lock whose file cannot be compared with its name is dropped and taken again.
        @Test func aLockWhoseFileCannotBeExaminedIsTakenAgain() throws {
            let scratch = try TemporaryDirectory("session-faults")
            defer { scratch.remove() }
            let info = SessionSamples.info()
            _ = try SessionStore(directory: scratch.url).start(info)  // dropped without end: crashed
            let store = SessionStore(directory: scratch.url)
            let recovered = injectingCoreFaults({ $0.fail(.fileStatus, errno: EIO) }) {
                SessionSamples.recoverSettled(store)
            }
            #expect(recovered.map(\.id) == [info.id])
            #expect(recovered.map(\.status) == [.crashed])
        }

        /// A lock file that cannot be deleted at acknowledgement goes at the next recovery.
        @Test func aLockFileThatCannotBeDeletedGoesAtTheNextRecovery() throws {
            let scratch = try TemporaryDirectory("session-faults")
            defer { scratch.remove() }
            let info = SessionSamples.info()
            try SessionStore(directory: scratch.url).start(info).end()
            let store = SessionStore(directory: scratch.url)
            let recovered = SessionSamples.recoverSettled(store)
            try injectingCoreFaults({ $0.fail(.unlink, errno: EROFS) }) {
                for session in recovered { try store.acknowledge(session) }
            }
            #expect(names(scratch).contains("\(info.id).lock"))
            #expect(SessionStore(directory: scratch.url).recoverPriorSessions().isEmpty)
            #expect(!names(scratch).contains("\(info.id).lock"), "\(names(scratch))")
        }

        /// A failed index write names the record and the errno, keeps the previous record and
        /// leaves no temporary file.
        @Test(arguments: [
            (Operation.open, EACCES, "cannot create"), (.write, ENOSPC, "cannot write"), (.sync, EIO, "cannot write"),
            (.rename, EXDEV, "cannot write"),
        ])
        func aFailedIndexWriteKeepsThePreviousRecord(operation: Operation, errno: Int32, action: String) throws {
            let scratch = try TemporaryDirectory("session-faults")
            defer { scratch.remove() }
            try FileManager.default.createDirectory(at: scratch.sessions, withIntermediateDirectories: true)
            let index = SessionIndex(folder: scratch.sessions.path, sync: true)
            let first = SessionIndexRecord(starting: SessionSamples.info(id: "indexed"))
            try index.write(first)
            var ended = first
            ended.status = .terminated
            ended.endedAtMs = first.startedAtMs + 5
            injectingCoreFaults({ $0.fail(operation, errno: errno) }) {
                #expect {
                    try index.write(ended)
                } throws: { error in
                    guard let error = error as? SessionError, error.code == .storage else { return false }
                    return error.message.hasPrefix("\(action) the session index record \(scratch.sessions.path)/")
                        && error.message.contains("indexed.session.json")
                        && error.message.hasSuffix("\(String(cString: strerror(errno))) (errno \(errno))")
                }
            }
            #expect(index.record(id: "indexed") == first)
            #expect(names(scratch) == ["indexed.session.json"])
        }

        @Test func shortWritesAreWrittenOnUntilTheRecordIsWhole() throws {
            let scratch = try TemporaryDirectory("session-faults")
            defer { scratch.remove() }
            try FileManager.default.createDirectory(at: scratch.sessions, withIntermediateDirectories: true)
            let index = SessionIndex(folder: scratch.sessions.path, sync: false)
            let record = SessionIndexRecord(starting: SessionSamples.info(id: "short"))
            try injectingCoreFaults({ $0.shortWrites(3) }) { try index.write(record) }
            #expect(index.record(id: "short") == record)
        }

        /// A record that cannot be read is no record, for now: the next read finds it.
        @Test(arguments: [Operation.open, .fileStatus, .read])
        func anUnreadableRecordIsSkipped(operation: Operation) throws {
            let scratch = try TemporaryDirectory("session-faults")
            defer { scratch.remove() }
            try FileManager.default.createDirectory(at: scratch.sessions, withIntermediateDirectories: true)
            let index = SessionIndex(folder: scratch.sessions.path, sync: false)
            let record = SessionIndexRecord(starting: SessionSamples.info(id: "unread"))
            try index.write(record)
            injectingCoreFaults({ $0.fail(operation, errno: EIO) }) { #expect(index.record(id: "unread") == nil) }
            #expect(index.record(id: "unread") == record)
        }

        /// Pruning never deletes a record whose journal it cannot rule out, and a record it cannot
        /// delete goes at the next pruning.
        @Test func pruningKeepsWhatItCannotCheckAndRetriesWhatItCannotDelete() throws {
            let scratch = try TemporaryDirectory("session-faults")
            defer { scratch.remove() }
            try FileManager.default.createDirectory(at: scratch.sessions, withIntermediateDirectories: true)
            let index = SessionIndex(folder: scratch.sessions.path, sync: false)
            for number in 0..<4 {
                try index.write(
                    SessionIndexRecord(
                        starting: SessionSamples.info(
                            id: "p\(number)", start: 1_796_000_000_000_000_000 + UInt64(number) * 1_000_000_000)))
            }
            injectingCoreFaults({ $0.fail(.pathStatus, errno: EACCES) }) { index.prune(capacity: 3) }
            #expect(index.records().map(\.id) == ["p0", "p2", "p3"])
            injectingCoreFaults({ $0.fail(.unlink, errno: EBUSY) }) { index.prune(capacity: 2) }
            #expect(index.records().map(\.id) == ["p0", "p2", "p3"])
            index.prune(capacity: 2)
            #expect(index.records().map(\.id) == ["p2", "p3"])
        }

        /// The end written ahead cannot be made: the start goes on and the end is written as usual.
        @Test(arguments: [(Operation.open, EACCES), (.write, ENOSPC)])
        func anEndThatCannotBeWrittenAheadLeavesNoFile(operation: Operation, errno: Int32) throws {
            let scratch = try TemporaryDirectory("session-faults")
            defer { scratch.remove() }
            try FileManager.default.createDirectory(at: scratch.sessions, withIntermediateDirectories: true)
            let index = SessionIndex(folder: scratch.sessions.path, sync: false)
            var record = SessionIndexRecord(starting: SessionSamples.info(id: "ahead"))
            record.status = .terminated
            injectingCoreFaults({ $0.fail(operation, errno: errno) }) { #expect(index.prepareEnd(record) == nil) }
            #expect(names(scratch).isEmpty)
        }

        /// The end written ahead cannot be committed (or removed): the end is written as usual, and
        /// what is left of the end written ahead goes at the next recovery.
        @Test(arguments: [[Operation.open], [.write], [.sync], [.rename], [.rename, .unlink]])
        func anEndThatCannotBeCommittedIsWrittenAsUsual(operations: [Operation]) throws {
            let scratch = try TemporaryDirectory("session-faults")
            defer { scratch.remove() }
            let info = SessionSamples.info()
            let store = SessionStore(directory: scratch.url, durability: .fsync)
            let session = try store.start(info)
            injectingCoreFaults({ faults in for operation in operations { faults.fail(operation, errno: EIO) } }) {
                session.end()
            }
            #expect(session.failureCount == 0)
            #expect(store.index.record(id: info.id)?.status == .terminated)
            let recovered = SessionSamples.recoverSettled(SessionStore(directory: scratch.url))
            #expect(recovered.count == 1)
            guard case .terminated = recovered.first?.status else {
                Issue.record("not recovered as terminated: \(recovered)")
                return
            }
            #expect(!FileManager.default.fileExists(atPath: store.index.endingPath(id: info.id)))
        }

        /// An abandoned temporary that cannot be examined or deleted stays for the next clean-up.
        @Test(arguments: [Operation.pathStatus, .unlink])
        func anAbandonedTemporaryThatCannotBeRemovedStaysForTheNextCleanUp(operation: Operation) throws {
            let scratch = try TemporaryDirectory("session-faults")
            defer { scratch.remove() }
            let path = scratch.url.appendingPathComponent(".abandoned.tmp").path
            #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8)))
            let old = Date(timeIntervalSinceNow: -Double(AbandonedTemporaries.ageSeconds * 2))
            try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: path)
            injectingCoreFaults({ $0.fail(operation, errno: EIO) }) {
                AbandonedTemporaries.remove(in: scratch.url.path) { $0.hasSuffix(".tmp") }
            }
            #expect(FileManager.default.fileExists(atPath: path))
            AbandonedTemporaries.remove(in: scratch.url.path) { $0.hasSuffix(".tmp") }
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }
#endif
