// Every syscall of span memory, made and read, failed on purpose through PerfCore's seam (debug
// builds only): creation and reading fail with an error naming the file, the call and the errno,
// leave no half-made file, and the calls of a live memory fail without crashing the host.
#if DEBUG
    import Foundation
    import Glibc
    import PerfTestSupport
    import Testing

    @testable import PerfCore

    @Suite struct SpanMemorySyscallFaultTests {
        typealias Operation = CoreSyscalls.Operation
        static let configuration = SpanMemory.Configuration(bytes: 1 << 20, nameCapacity: 8, ringCapacity: 16)

        @Test(arguments: [(Operation.open, EACCES, "open"), (.allocate, ENOSPC, "fallocate"), (.map, ENOMEM, "mmap")])
        func aFileThatCannotBeMadeIsNamedAndRemoved(operation: Operation, errno: Int32, call: String) throws {
            let scratch = try TemporaryDirectory("span-memory-faults")
            defer { scratch.remove() }
            let path = scratch.url.appendingPathComponent(RecoveredSpanMemory.fileName).path
            injectingCoreFaults({ $0.fail(operation, errno: errno) }) {
                #expect(throws: SpanMemoryError(path: path, operation: call, errno: errno)) {
                    _ = try SpanMemory.create(path: path, Self.configuration)
                }
            }
            let error = SpanMemoryError(path: path, operation: call, errno: errno)
            #expect(error.description == "span memory \(path): \(call): \(String(cString: strerror(errno)))")
            #expect(!FileManager.default.fileExists(atPath: path))
        }

        /// An unreadable file-size limit is no limit: the memory is made as usual.
        @Test func anUnreadableFileSizeLimitIsNoLimit() throws {
            let scratch = try TemporaryDirectory("span-memory-faults")
            defer { scratch.remove() }
            let path = scratch.url.appendingPathComponent(RecoveredSpanMemory.fileName).path
            let memory = try injectingCoreFaults({ $0.fail(.limit, errno: EPERM) }) {
                try SpanMemory.create(path: path, Self.configuration)
            }
            #expect(FileManager.default.fileExists(atPath: path))
            memory.close()
        }

        @Test func anonymousMemoryThatCannotBeMappedSaysSo() {
            injectingCoreFaults({ $0.fail(.map, errno: ENOMEM) }) {
                #expect(throws: SpanMemoryError(path: nil, operation: "mmap", errno: ENOMEM)) {
                    _ = try SpanMemory.anonymous(Self.configuration)
                }
            }
        }

        /// A clean close whose file cannot be deleted, or whose pages cannot be swapped for fresh
        /// ones, leaves a memory that still takes records; syncing and re-dirtying report failure.
        @Test(arguments: [Operation.unlink, .map, .sync, .resident])
        func callsOnALiveMemoryFailWithoutCrashing(operation: Operation) throws {
            let scratch = try TemporaryDirectory("span-memory-faults")
            defer { scratch.remove() }
            let path = scratch.url.appendingPathComponent(RecoveredSpanMemory.fileName).path
            let memory = try SpanMemory.create(path: path, Self.configuration)
            let registry = HistogramRegistry(memory: memory)
            _ = registry.record("before", nanos: 1_000)
            injectingCoreFaults({ $0.fail(operation, errno: EIO) }) {
                switch operation {
                case .sync: #expect(memory.synchronize() == EIO)
                case .resident: #expect(memory.redirtyResidentPages() == 0)
                default: memory.close()
                }
            }
            _ = registry.record("after", nanos: 2_000)
            #expect(registry.snapshot()["after"]?.count == 1)
            #expect(FileManager.default.fileExists(atPath: path) == (operation != .map))
        }

        /// A prior session's file that cannot be read is an error naming it and the call; a file
        /// that is not there is no memory.
        @Test(arguments: [(Operation.open, EACCES, "open"), (.fileStatus, EIO, "fstat"), (.read, EIO, "read")])
        func aFileThatCannotBeReadIsNamed(operation: Operation, errno: Int32, call: String) throws {
            let scratch = try TemporaryDirectory("span-memory-faults")
            defer { scratch.remove() }
            let path = scratch.url.appendingPathComponent(RecoveredSpanMemory.fileName).path
            let memory = try SpanMemory.create(path: path, Self.configuration)
            memory.heartbeat(monotonicNanos: 5, wallNanos: 1_796_000_000_000_000_000)
            injectingCoreFaults({ $0.fail(operation, errno: errno) }) {
                #expect(throws: SpanMemoryError(path: path, operation: call, errno: errno)) {
                    _ = try RecoveredSpanMemory.read(path: path)
                }
            }
            #expect(try RecoveredSpanMemory.read(path: path) != nil)
            let missing = try injectingCoreFaults({ $0.fail(.open, errno: ENOENT) }) {
                () throws -> RecoveredSpanMemory? in try RecoveredSpanMemory.read(path: path)
            }
            #expect(missing == nil)
        }

        /// Recovery reports a crashed session's unreadable span memory and goes on.
        @Test func recoveryReportsAnUnreadableSpanMemory() throws {
            let scratch = try TemporaryDirectory("span-memory-faults")
            defer { scratch.remove() }
            let info = SessionSamples.info()
            let store = SessionStore(directory: scratch.url)
            var session: LiveSession? = try store.start(info)
            let memory = try SpanMemory.create(path: store.spanMemoryPath(id: info.id), Self.configuration)
            memory.heartbeat(monotonicNanos: 5, wallNanos: info.startWallNanos + 1_000_000_000)
            session = nil
            #expect(session == nil)
            // Recovered until the lock is had (see `SessionSamples.recoverSettled`): the fault is
            // taken by the first recovery that reads the file.
            let recovering = SessionStore(directory: scratch.url)
            let recovered = injectingCoreFaults({ $0.fail(.read, errno: EIO) }) { () -> [RecoveredSession] in
                var recovered: [RecoveredSession] = []
                _ = pollUntil(seconds: 10) {
                    recovered = recovering.recoverPriorSessions()
                    return !recovered.isEmpty
                }
                return recovered
            }
            #expect(recovered.map(\.status) == [.crashed])
            #expect(recovered.first?.spanMemory == nil)
            let problem = try #require(recovered.first?.spanMemoryProblem)
            let path = store.spanMemoryPath(id: info.id)
            #expect(problem == "span memory \(path): read: \(String(cString: strerror(EIO)))")
        }
    }
#endif
