// Debug-only fault injection for the syscall seam: tests force short writes, ENOSPC, EINTR
// and failed unlinks on one journal without touching any other, and run work between two
// syscalls to replay a race deterministically.
#if DEBUG
    import Synchronization

    /// A per-journal plan of syscall failures, consumed in order.
    ///
    /// Faults are scoped to the ``Syscalls`` value that holds this object, so tests running in
    /// parallel never see each other's faults.
    final class FaultInjection: Sendable {
        typealias Operation = SyscallOperation

        private struct Plan {
            var errnos: [Operation: [Int32]] = [:]
            var shortWrites: [Int] = []
            /// Calls of each operation, counted while an interleaving is pending for it.
            var calls: [Operation: Int] = [:]
            /// Work to run just before a given call of an operation.
            var interleavings: [Operation: [(call: Int, action: @Sendable () -> Void)]] = [:]
        }

        private let plan = Mutex(Plan())
        /// Fast exit when nothing is planned, so the seam costs one load per syscall.
        private let armed = Atomic<Bool>(false)

        init() {}

        /// Makes the next calls of `operation` fail with `code`, once per element of `count`.
        func fail(_ operation: Operation, errno code: Int32, times count: Int = 1) {
            plan.withLock { $0.errnos[operation, default: []].append(contentsOf: repeatElement(code, count: count)) }
            armed.store(true, ordering: .releasing)
        }

        /// Makes the next frame write store only its first `keptBytes` bytes.
        func shortWrite(keeping keptBytes: Int) {
            plan.withLock { $0.shortWrites.append(keptBytes) }
            armed.store(true, ordering: .releasing)
        }

        /// Runs `action` just before the `call`-th call of `operation` from now (1 for the next),
        /// as another thread's work would land between two syscalls: a deterministic stand-in
        /// for a race, e.g. a reaper unlinking segments while recovery reads them.
        func interleave(before call: Int, of operation: Operation, _ action: @escaping @Sendable () -> Void) {
            plan.withLock { plan in
                let target = plan.calls[operation, default: 0] + call
                plan.interleavings[operation, default: []].append((target, action))
            }
            armed.store(true, ordering: .releasing)
        }

        /// Faults planned but not yet triggered.
        var pendingCount: Int {
            plan.withLock {
                $0.shortWrites.count + $0.errnos.values.reduce(0) { $0 + $1.count }
                    + $0.interleavings.values.reduce(0) { $0 + $1.count }
            }
        }

        /// Counts a call of `operation` and runs the work planned before it (outside the lock).
        func runInterleavings(before operation: Operation) {
            guard armed.load(ordering: .acquiring) else { return }
            let due = plan.withLock { plan -> [@Sendable () -> Void] in
                guard let planned = plan.interleavings[operation], !planned.isEmpty else { return [] }
                let call = plan.calls[operation, default: 0] + 1
                plan.calls[operation] = call
                plan.interleavings[operation] = planned.filter { $0.call != call }
                return planned.filter { $0.call == call }.map { $0.action }
            }
            for action in due { action() }
        }

        func takeErrno(for operation: Operation) -> Int32? {
            guard armed.load(ordering: .acquiring) else { return nil }
            return plan.withLock { plan -> Int32? in
                guard var codes = plan.errnos[operation], !codes.isEmpty else { return nil }
                let code = codes.removeFirst()
                plan.errnos[operation] = codes
                return code
            }
        }

        func takeShortWrite() -> Int? {
            guard armed.load(ordering: .acquiring) else { return nil }
            return plan.withLock { $0.shortWrites.isEmpty ? nil : $0.shortWrites.removeFirst() }
        }
    }
#endif
