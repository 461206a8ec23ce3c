// Debug-only fault injection for PerfCore's syscall seam: a test makes the next calls of one kind
// fail (ENOSPC on a write, EACCES on an open, a failed rename or mmap) or write short, for the code
// it runs inside `CoreSyscallFaults.$current.withValue(faults) { ... }` and nowhere else.
#if DEBUG
    import Synchronization

    /// A plan of syscall failures for `CoreSyscalls`, consumed in order.
    ///
    /// Sessions and span memory are reached through static entry points (`SessionStore`'s lock
    /// files, `SpanMemory.create`, `RecoveredSpanMemory.read`), so the plan is found through a task
    /// local rather than handed down: tests running in parallel each see only their own faults,
    /// and production code has nothing to carry.
    final class CoreSyscallFaults: Sendable {
        typealias Operation = CoreSyscalls.Operation

        /// The plan of the running task (and of the synchronous code it calls), if any.
        @TaskLocal static var current: CoreSyscallFaults?

        private struct Plan {
            var errnos: [Operation: [Int32]] = [:]
            var shortWrites = 0
            var calls: [Operation: Int] = [:]
        }

        private let plan = Mutex(Plan())

        init() {}

        /// Makes the next `count` calls of `operation` fail with `code`.
        func fail(_ operation: Operation, errno code: Int32, times count: Int = 1) {
            plan.withLock { $0.errnos[operation, default: []] += Array(repeating: code, count: count) }
        }

        /// Makes the next `count` writes store only half of their bytes.
        func shortWrites(_ count: Int = 1) {
            plan.withLock { $0.shortWrites += count }
        }

        /// Failures and short writes planned but not yet taken.
        var pendingCount: Int {
            plan.withLock { $0.shortWrites + $0.errnos.values.reduce(0) { $0 + $1.count } }
        }

        /// How many calls of `operation` the seam has made (or failed) under this plan.
        func calls(of operation: Operation) -> Int {
            plan.withLock { $0.calls[operation, default: 0] }
        }

        func take(_ operation: Operation) -> Int32? {
            plan.withLock { plan -> Int32? in
                plan.calls[operation, default: 0] += 1
                guard var codes = plan.errnos[operation], !codes.isEmpty else { return nil }
                let code = codes.removeFirst()
                plan.errnos[operation] = codes
                return code
            }
        }

        func takeShortWrite() -> Bool {
            plan.withLock { plan -> Bool in
                guard plan.shortWrites > 0 else { return false }
                plan.shortWrites -= 1
                return true
            }
        }
    }
#endif
