// perf_remote_unwind: the stack of a thread blocked in a system call, taken without a signal.
//
// Each blocking kind runs on its own pthread inside a distinct `@inline(never)` function, so the
// unwound stack must name it. The thread repeats its call until the test has its stack; every
// call must have returned normally after its full duration (no EINTR, no short sleep): proof
// that unwinding did not disturb the thread. Waits poll the thread's syscall line with a
// generous deadline; nothing sleeps as synchronisation. REMOTE_UNWIND_PRINT=1 prints the frames.
import CPerfShims
import Dispatch
import Glibc
import PerfTestSupport
import Synchronization
import Testing

@testable import Perf

// MARK: - Tests

@Suite struct RemoteUnwindTests {
    /// Runs `call` on a new thread until it is unwound while blocked in one of `nr`, then checks
    /// the frames and that no call was cut short.
    private func check(
        function: String, libc: [String], nr: [Int64], minimumNanos: UInt64,
        expectResult: @escaping @Sendable (RemoteUnwindTestOutcome) -> Bool,
        afterUnwind: @Sendable () -> Void = {},
        _ call: @escaping @Sendable () -> RemoteUnwindTestOutcome
    ) throws {
        let thread = RemoteUnwindTestThread { $0.repeatUntilStopped(call) }
        let tid = try #require(thread.start())
        let (count, frames) = remoteUnwindTestUnwind(tid, nr: nr)
        // Stop before unblocking (a pipe read returns once, on the byte written here).
        thread.stop.store(true, ordering: .releasing)
        afterUnwind()
        thread.finish()
        let names = frames.map(\.name)
        if getenv("REMOTE_UNWIND_PRINT") != nil { print("\(function): \(frames.map { "\n  \($0)" }.joined())") }
        // The pc at the call is in libc (a system call wrapper).
        #expect(frames.first?.image.contains("libc.so") == true, "\(frames)")
        #expect(count >= 3, "perf_remote_unwind returned \(count): \(frames)")
        #expect(names.contains { $0.contains(function) }, "\(function) not among \(frames)")
        // Past the blocking function, up the frame-pointer chain, to the thread's start in libc
        // (clone3, whose CFI marks the outermost frame).
        #expect(names.contains { $0.contains("repeatUntilStopped") }, "\(frames)")
        #expect(frames.last?.image.contains("libc.so") == true, "\(frames)")
        if !libc.isEmpty {
            let first = names.prefix(6)
            #expect(first.contains { libc.contains($0) }, "none of \(libc) among the first frames of \(frames)")
        }
        let outcomes = thread.outcomes.withLock { $0 }
        #expect(!outcomes.isEmpty)
        for outcome in outcomes {
            #expect(expectResult(outcome), "call cut short or failed: \(outcome)")
            #expect(outcome.elapsedNanos >= minimumNanos, "call returned early: \(outcome)")
        }
    }

    @Test(.enabled(if: remoteUnwindTestSupported)) func usleepIsUnwoundWithoutInterruptingIt() throws {
        try check(
            function: "remoteUnwindTestSleeper", libc: ["usleep", "nanosleep", "__nanosleep", "clock_nanosleep"],
            nr: [RemoteUnwindTestSyscall.clockNanosleep, RemoteUnwindTestSyscall.nanosleep],
            minimumNanos: remoteUnwindTestTimeoutNanos, expectResult: { $0.result == 0 && $0.error != EINTR }
        ) { remoteUnwindTestSleeper() }
    }

    @Test(.enabled(if: remoteUnwindTestSupported)) func pollIsUnwoundWithoutInterruptingIt() throws {
        try check(
            function: "remoteUnwindTestPoller", libc: ["poll", "__poll"],
            nr: [RemoteUnwindTestSyscall.poll, RemoteUnwindTestSyscall.ppoll],
            minimumNanos: remoteUnwindTestTimeoutNanos, expectResult: { $0.result == 0 }
        ) { remoteUnwindTestPoller() }
    }

    @Test(.enabled(if: remoteUnwindTestSupported)) func pipeReadIsUnwoundAndThenCompletes() throws {
        var fds: [Int32] = [-1, -1]
        try #require(pipe(&fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        // One read only: it blocks until the byte written after the unwind arrives.
        try check(
            function: "remoteUnwindTestReader", libc: ["read", "__read", "__libc_read"],
            nr: [RemoteUnwindTestSyscall.read], minimumNanos: 0, expectResult: { $0.result == 0x2a },
            afterUnwind: {
                var byte: UInt8 = 0x2a
                _ = write(writeEnd, &byte, 1)
            }
        ) { remoteUnwindTestReader(readEnd) }
    }

    @Test(.enabled(if: remoteUnwindTestSupported)) func condTimedwaitIsUnwoundWithoutInterruptingIt() throws {
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
        defer {
            pthread_cond_destroy(condition)
            pthread_mutex_destroy(mutex)
            condition.deallocate()
            mutex.deallocate()
        }
        let pointers = RemoteUnwindTestPointers(mutex: mutex, condition: condition)
        try check(
            function: "remoteUnwindTestCondWaiter", libc: ["pthread_cond_timedwait", "__pthread_cond_timedwait"],
            nr: [RemoteUnwindTestSyscall.futex, RemoteUnwindTestSyscall.futexWaitv],
            minimumNanos: remoteUnwindTestTimeoutNanos, expectResult: { $0.result == Int(ETIMEDOUT) }
        ) { remoteUnwindTestCondWaiter(pointers.mutex, pointers.condition) }
    }

    @Test(.enabled(if: remoteUnwindTestSupported)) func semTimedwaitIsUnwoundWithoutInterruptingIt() throws {
        let semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
        try #require(sem_init(semaphore, 0, 0) == 0)
        defer {
            sem_destroy(semaphore)
            semaphore.deallocate()
        }
        let pointers = RemoteUnwindTestPointers(semaphore: semaphore)
        try check(
            // sem_timedwait tail-calls its slow path (jmp): it is not on the stack, and the slow
            // path and the futex wait are internal functions .dynsym cannot name.
            function: "remoteUnwindTestSemWaiter", libc: [],
            nr: [RemoteUnwindTestSyscall.futex, RemoteUnwindTestSyscall.futexWaitv],
            minimumNanos: remoteUnwindTestTimeoutNanos,
            expectResult: { $0.result == -1 && $0.error == ETIMEDOUT }
        ) { remoteUnwindTestSemWaiter(pointers.semaphore) }
    }

    /// Through libdispatch and its Swift overlay (other images, other compilers' frames).
    @Test(.enabled(if: remoteUnwindTestSupported)) func dispatchSemaphoreIsUnwoundWithoutInterruptingIt() throws {
        try check(
            function: "remoteUnwindTestDispatchWaiter", libc: [],
            nr: [RemoteUnwindTestSyscall.futex, RemoteUnwindTestSyscall.futexWaitv],
            minimumNanos: remoteUnwindTestTimeoutNanos, expectResult: { $0.result == 0 }
        ) { remoteUnwindTestDispatchWaiter() }
    }

    @Test(.enabled(if: remoteUnwindTestSupported)) func epollWaitIsUnwoundWithoutInterruptingIt() throws {
        let create = try #require(RemoteUnwindTestEpoll.create)
        try #require(RemoteUnwindTestEpoll.wait != nil)
        let epoll = create(O_CLOEXEC)
        try #require(epoll >= 0)
        defer { close(epoll) }
        try check(
            function: "remoteUnwindTestEpollWaiter", libc: ["epoll_wait"],
            nr: [RemoteUnwindTestSyscall.epollWait, RemoteUnwindTestSyscall.epollPwait],
            minimumNanos: remoteUnwindTestTimeoutNanos, expectResult: { $0.result == 0 }
        ) { remoteUnwindTestEpollWaiter(epoll) }
    }

    /// A thread blocked inside a signal handler: the walk goes through the kernel's signal frame
    /// (glibc's __restore_rt, whose CFI is DWARF expressions over the saved context, "S"
    /// augmentation) back to the interrupted code.
    @Test(.enabled(if: remoteUnwindTestSupported)) func aSignalFrameIsUnwoundThrough() throws {
        var fds: [Int32] = [-1, -1]
        try #require(pipe(&fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        remoteUnwindTestSignalPipe.store(fds[0], ordering: .releasing)
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in remoteUnwindTestInHandler() }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        var previous = sigaction()
        try #require(sigaction(SIGUSR2, &action, &previous) == 0)
        defer { sigaction(SIGUSR2, &previous, nil) }
        let thread = RemoteUnwindTestThread { shared in
            let outcome = remoteUnwindTestRaiser()
            shared.outcomes.withLock { $0.append(outcome) }
        }
        let tid = try #require(thread.start())
        let (count, frames) = remoteUnwindTestUnwind(tid, nr: [RemoteUnwindTestSyscall.read])
        var byte: UInt8 = 1
        _ = write(fds[1], &byte, 1)
        thread.finish()
        if getenv("REMOTE_UNWIND_PRINT") != nil { print("signal: \(frames.map { "\n  \($0)" }.joined())") }
        let names = frames.map(\.name)
        #expect(count >= 3, "\(frames)")
        #expect(names.contains { $0.contains("remoteUnwindTestInHandler") }, "\(frames)")
        #expect(names.contains { $0.contains("remoteUnwindTestRaiser") }, "\(frames)")
        #expect(
            names.contains { $0.contains("repeatUntilStopped") || $0.contains("RemoteUnwindTestThread") }, "\(frames)")
        #expect(thread.outcomes.withLock { $0.map(\.result) } == [0])
    }

    @Test(.enabled(if: remoteUnwindTestSupported)) func theMainThreadUnwindsToStart() throws {
        // The main thread (tid = pid, on the process stack) waits for the tests most of the time;
        // when it is never seen blocked there is nothing to check.
        let main = getpid()
        var addresses = [UInt](repeating: 0, count: Int(PERF_STACK_MAX_FRAMES))
        var call = perf_thread_syscall()
        let deadline = perf_monotonic_ns() + 10_000_000_000
        while perf_monotonic_ns() < deadline {
            guard remoteUnwindTestWaitBlocked(main, nr: nil, seconds: 1) else { continue }
            let count = addresses.withUnsafeMutableBufferPointer {
                perf_remote_unwind(main, $0.baseAddress, Int32($0.count), &call)
            }
            guard count > 0 else { continue }
            let frames = remoteUnwindTestSymbolicate(Array(addresses[..<Int(count)]))
            if getenv("REMOTE_UNWIND_PRINT") != nil { print("main: \(frames.map { "\n  \($0)" }.joined())") }
            #expect(count >= 3, "\(frames)")
            #expect(frames.contains { $0.name.contains("__libc_start") || $0.name == "_start" }, "\(frames)")
            return
        }
    }

    @Test func aSpinningThreadIsRunningAndNotUnwound() throws {
        let thread = RemoteUnwindTestThread { shared in
            var spins: UInt64 = 0
            while !shared.stop.load(ordering: .relaxed) { spins &+= 1 }
        }
        let tid = try #require(thread.start())
        defer { thread.finish() }
        var call = perf_thread_syscall()
        for _ in 0..<50 {
            #expect(perf_thread_read_syscall(tid, &call) == 0)
            #expect(
                call.state == Int32(PERF_THREAD_RUNNING) || call.state == Int32(PERF_THREAD_USER),
                "state \(call.state) nr \(call.nr)")
            if call.state == Int32(PERF_THREAD_RUNNING) { #expect(call.nr == -1 && call.sp == 0 && call.pc == 0) }
        }
        var frames = [UInt](repeating: 0, count: 16)
        let count = frames.withUnsafeMutableBufferPointer { perf_remote_unwind(tid, $0.baseAddress, 16, &call) }
        #expect(count == -1)
        #expect(call.state == Int32(PERF_THREAD_RUNNING) || call.state == Int32(PERF_THREAD_USER))
    }

    @Test func aMissingThreadIsGone() {
        var frames = [UInt](repeating: 0, count: 16)
        for tid in [Int32.max, 0, -5] {
            var call = perf_thread_syscall()
            call.state = Int32(PERF_THREAD_BLOCKED)
            #expect(perf_thread_read_syscall(tid, &call) == -1)
            #expect(call.state == Int32(PERF_THREAD_GONE))
            call.state = Int32(PERF_THREAD_BLOCKED)
            let count = frames.withUnsafeMutableBufferPointer { perf_remote_unwind(tid, $0.baseAddress, 16, &call) }
            #expect(count == -1)
            #expect(call.state == Int32(PERF_THREAD_GONE))
        }
        // The calling thread is running (its own syscall file shows it in that read).
        var call = perf_thread_syscall()
        #expect(
            frames.withUnsafeMutableBufferPointer { perf_remote_unwind(perf_gettid(), $0.baseAddress, 16, &call) } == -1
        )
        #expect(call.state == Int32(PERF_THREAD_RUNNING))
        // NULL syscall_out is allowed.
        #expect(frames.withUnsafeMutableBufferPointer { perf_remote_unwind(Int32.max, $0.baseAddress, 16, nil) } == -1)
    }

    @Test func memoryReadsNeverFault() throws {
        var word: UInt64 = 0
        #expect(perf_read_memory(0, &word, 8) == 0)
        #expect(perf_read_memory(8, &word, 8) == 0)
        #expect(perf_read_memory(UInt.max - 3, &word, 8) == 0)
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let mapping = try #require(
            mmap(nil, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), "mmap")
        try #require(mapping != MAP_FAILED)
        let base = UInt(bitPattern: mapping)
        mapping.storeBytes(of: 0x1122_3344_5566_7788 as UInt64, toByteOffset: page - 8, as: UInt64.self)
        // The second page is unmapped: a read across the boundary stops there.
        munmap(mapping + page, page)
        defer { munmap(mapping, page) }
        #expect(perf_read_memory(base + UInt(page) - 8, &word, 8) == 8)
        #expect(word == 0x1122_3344_5566_7788)
        var buffer = [UInt8](repeating: 0, count: 64)
        #expect(perf_read_memory(base + UInt(page) - 8, &buffer, 64) == 8)
        #expect(perf_read_memory(base + UInt(page), &buffer, 64) == 0)
        // An inaccessible (PROT_NONE) page is unreadable too.
        mprotect(mapping, page, PROT_NONE)
        #expect(perf_read_memory(base, &buffer, 64) == 0)
    }

    /// A thread that alternates at random between short system calls and spinning, unwound
    /// 2,000 times with random capacities: every answer must be an error code or frames whose
    /// first entry is the reported pc, and nothing may crash.
    @Test(.enabled(if: remoteUnwindTestSupported)) func fuzzAgainstAThreadThatKeepsMoving() throws {
        let seed = SeededRandom.makeSeed()
        let thread = RemoteUnwindTestThread { shared in
            var random = SeededRandom(seed: seed ^ 0xABCD)
            var sink: UInt64 = 0
            while !shared.stop.load(ordering: .relaxed) {
                switch random.next() % 7 {
                case 0: usleep(UInt32(random.next() % 300))
                case 1: poll(nil, 0, Int32(random.next() % 2))
                case 2: sched_yield()
                case 3: _ = getppid()
                case 4: sink &+= remoteUnwindTestGarbageSleeper(&random)
                default:
                    for _ in 0..<(random.next() % 20_000) { sink &+= random.next() }
                }
            }
            withExtendedLifetime(sink) {}
        }
        let tid = try #require(thread.start())
        defer { thread.finish() }
        var random = SeededRandom(seed: seed)
        var frames = [UInt](repeating: 0, count: 64)
        var counts: [Int32: Int] = [:]
        for iteration in 0..<2000 {
            let capacity = Int32(1 + random.next() % 64)
            var call = perf_thread_syscall()
            let count = frames.withUnsafeMutableBufferPointer {
                perf_remote_unwind(tid, $0.baseAddress, capacity, &call)
            }
            counts[count > 0 ? 1 : count, default: 0] += 1
            if count > 0 {
                #expect(count <= capacity, "seed \(seed) iteration \(iteration)")
                #expect(frames[0] == UInt(call.pc), "seed \(seed) iteration \(iteration)")
                #expect(call.state == Int32(PERF_THREAD_BLOCKED), "seed \(seed) iteration \(iteration)")
            } else {
                #expect([-1, -2, -4].contains(count), "seed \(seed) iteration \(iteration): \(count)")
            }
            // A random pause (spinning: on a loaded machine each sched_yield can cost a time slice).
            var pause = random.next() % 20_000
            while pause > 0 { pause = remoteUnwindTestOpaque(pause) - 1 }
        }
        // The thread spends most of its time in system calls: some unwinds must succeed.
        #expect((counts[1] ?? 0) > 0, "seed \(seed): \(counts)")
    }
}

/// Raw pointers handed to a test thread (they outlive it: the test joins before freeing them).
private struct RemoteUnwindTestPointers: @unchecked Sendable {
    var mutex: UnsafeMutablePointer<pthread_mutex_t>! = nil
    var condition: UnsafeMutablePointer<pthread_cond_t>! = nil
    var semaphore: UnsafeMutablePointer<sem_t>! = nil
}

/// Returns its argument; the optimiser cannot see through it (keeps spin loops).
@inline(never)
func remoteUnwindTestOpaque(_ value: UInt64) -> UInt64 { value }
