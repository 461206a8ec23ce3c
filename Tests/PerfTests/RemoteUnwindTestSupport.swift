// The remote unwinder tests' hosts: one blocking function per kind of wait (never inlined, never
// a tail call), the thread that runs one, and reading its stack from outside.
import CPerfShims
import Dispatch
import Glibc
import PerfTestSupport
import Synchronization
import Testing

@testable import Perf

// MARK: - The blocking functions (one per kind, never inlined, never tail calls)

/// How one blocking call ended, as seen by the thread that made it.
struct RemoteUnwindTestOutcome: Sendable {
    var result: Int
    var error: Int32
    /// Measured on the clock the call's timeout is defined on.
    var elapsedNanos: UInt64
}

let remoteUnwindTestTimeoutMillis: Int32 = 400
let remoteUnwindTestTimeoutNanos = UInt64(remoteUnwindTestTimeoutMillis) * 1_000_000

func remoteUnwindTestClock(_ clock: clockid_t) -> UInt64 {
    var now = timespec()
    clock_gettime(clock, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

func remoteUnwindTestDeadline(_ clock: clockid_t, afterNanos nanos: UInt64) -> timespec {
    let at = remoteUnwindTestClock(clock) + nanos
    return timespec(tv_sec: Int(at / 1_000_000_000), tv_nsec: Int(at % 1_000_000_000))
}

@inline(never)
func remoteUnwindTestSleeper() -> RemoteUnwindTestOutcome {
    let start = remoteUnwindTestClock(CLOCK_MONOTONIC)
    let result = usleep(UInt32(remoteUnwindTestTimeoutMillis) * 1000)
    let error = errno
    return RemoteUnwindTestOutcome(
        result: Int(result), error: error, elapsedNanos: remoteUnwindTestClock(CLOCK_MONOTONIC) - start)
}

@inline(never)
func remoteUnwindTestPoller() -> RemoteUnwindTestOutcome {
    let start = remoteUnwindTestClock(CLOCK_MONOTONIC)
    let result = poll(nil, 0, remoteUnwindTestTimeoutMillis)
    let error = errno
    return RemoteUnwindTestOutcome(
        result: Int(result), error: error, elapsedNanos: remoteUnwindTestClock(CLOCK_MONOTONIC) - start)
}

@inline(never)
func remoteUnwindTestReader(_ fd: Int32) -> RemoteUnwindTestOutcome {
    var byte: UInt8 = 0
    let result = read(fd, &byte, 1)
    let error = errno
    return RemoteUnwindTestOutcome(result: result == 1 ? Int(byte) : -1 - Int(result), error: error, elapsedNanos: 0)
}

@inline(never)
func remoteUnwindTestCondWaiter(
    _ mutex: UnsafeMutablePointer<pthread_mutex_t>, _ condition: UnsafeMutablePointer<pthread_cond_t>
) -> RemoteUnwindTestOutcome {
    pthread_mutex_lock(mutex)
    // The condition variable runs on CLOCK_MONOTONIC (see the test), so its deadline does too.
    var deadline = remoteUnwindTestDeadline(CLOCK_MONOTONIC, afterNanos: remoteUnwindTestTimeoutNanos)
    let start = remoteUnwindTestClock(CLOCK_MONOTONIC)
    let result = pthread_cond_timedwait(condition, mutex, &deadline)
    let elapsed = remoteUnwindTestClock(CLOCK_MONOTONIC) - start
    pthread_mutex_unlock(mutex)
    return RemoteUnwindTestOutcome(result: Int(result), error: result, elapsedNanos: elapsed)
}

@inline(never)
func remoteUnwindTestSemWaiter(_ semaphore: UnsafeMutablePointer<sem_t>) -> RemoteUnwindTestOutcome {
    // sem_timedwait's deadline is on CLOCK_REALTIME: measure on it too.
    var deadline = remoteUnwindTestDeadline(CLOCK_REALTIME, afterNanos: remoteUnwindTestTimeoutNanos)
    let start = remoteUnwindTestClock(CLOCK_REALTIME)
    let result = sem_timedwait(semaphore, &deadline)
    let error = errno
    return RemoteUnwindTestOutcome(
        result: Int(result), error: error, elapsedNanos: remoteUnwindTestClock(CLOCK_REALTIME) - start)
}

@inline(never)
func remoteUnwindTestDispatchWaiter() -> RemoteUnwindTestOutcome {
    let semaphore = DispatchSemaphore(value: 0)
    let start = remoteUnwindTestClock(CLOCK_MONOTONIC)
    let timedOut = semaphore.wait(timeout: .now() + .milliseconds(Int(remoteUnwindTestTimeoutMillis))) == .timedOut
    return RemoteUnwindTestOutcome(
        result: timedOut ? 0 : 1, error: 0, elapsedNanos: remoteUnwindTestClock(CLOCK_MONOTONIC) - start)
}

/// epoll is not in Swift's Glibc module: its two functions, looked up in libc.
enum RemoteUnwindTestEpoll {
    typealias Create = @convention(c) (Int32) -> Int32
    typealias Wait = @convention(c) (Int32, UnsafeMutableRawPointer?, Int32, Int32) -> Int32
    static let create: Create? = dlsym(nil, "epoll_create1").map { unsafeBitCast($0, to: Create.self) }
    static let wait: Wait? = dlsym(nil, "epoll_wait").map { unsafeBitCast($0, to: Wait.self) }
}

@inline(never)
func remoteUnwindTestEpollWaiter(_ epoll: Int32) -> RemoteUnwindTestOutcome {
    var event: (UInt64, UInt64) = (0, 0)  // room for one struct epoll_event (12 bytes, packed)
    let start = remoteUnwindTestClock(CLOCK_MONOTONIC)
    let result = RemoteUnwindTestEpoll.wait!(epoll, &event, 1, remoteUnwindTestTimeoutMillis)
    let error = errno
    return RemoteUnwindTestOutcome(
        result: Int(result), error: error, elapsedNanos: remoteUnwindTestClock(CLOCK_MONOTONIC) - start)
}

/// The pipe the signal handler of `aSignalFrameIsUnwoundThrough` reads from.
let remoteUnwindTestSignalPipe = Atomic<Int32>(-1)

@inline(never)
func remoteUnwindTestInHandler() {
    var byte: UInt8 = 0
    _ = read(remoteUnwindTestSignalPipe.load(ordering: .acquiring), &byte, 1)
}

@inline(never)
func remoteUnwindTestRaiser() -> RemoteUnwindTestOutcome {
    // Threads inherit the creator's mask, and dispatch's workers block SIGUSR2.
    var unblock = sigset_t()
    sigemptyset(&unblock)
    sigaddset(&unblock, SIGUSR2)
    pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
    // The handler runs on this thread before pthread_kill returns.
    let result = pthread_kill(pthread_self(), SIGUSR2)
    return RemoteUnwindTestOutcome(result: Int(result), error: 0, elapsedNanos: 0)
}

/// Fills its own frame with words that look like frame records (code addresses, some right
/// after calls; stack addresses above and below; zeros; noise), then sleeps briefly: the
/// unwinder's stack scan must survive whatever it finds.
@inline(never)
func remoteUnwindTestGarbageSleeper(_ random: inout SeededRandom) -> UInt64 {
    let code = unsafeBitCast(usleep as @convention(c) (UInt32) -> Int32, to: UInt.self)
    let ownCode = unsafeBitCast(perf_gettid as @convention(c) () -> Int32, to: UInt.self)
    return withUnsafeTemporaryAllocation(of: UInt.self, capacity: 512) { words in
        let stack = UInt(bitPattern: words.baseAddress)
        for index in words.indices {
            let r = random.next()
            switch r % 6 {
            case 0: words[index] = code &+ UInt((r >> 8) % 4096) &- 2048
            case 1: words[index] = ownCode &+ UInt((r >> 8) % 512)
            case 2: words[index] = stack &+ UInt((r >> 8) % 16384) &- 4096
            case 3: words[index] = 0
            default: words[index] = UInt(truncatingIfNeeded: r)
            }
        }
        usleep(UInt32(random.next() % 300))
        return words.reduce(0) { $0 &+ UInt64($1) }
    }
}

// MARK: - Support

/// State shared between a test and the thread it observes.
final class RemoteUnwindTestThread: Sendable {
    let tid = Atomic<Int32>(0)
    let stop = Atomic<Bool>(false)
    let outcomes = Mutex<[RemoteUnwindTestOutcome]>([])
    let body: @Sendable (RemoteUnwindTestThread) -> Void
    private let handle = Mutex<pthread_t?>(nil)

    init(_ body: @escaping @Sendable (RemoteUnwindTestThread) -> Void) { self.body = body }

    /// Starts the thread and waits (spinning, with a deadline) until it has published its tid.
    func start() -> Int32? {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let created = pthread_create(
            &thread, nil,
            { context in
                let shared = Unmanaged<RemoteUnwindTestThread>.fromOpaque(context!).takeRetainedValue()
                shared.tid.store(perf_gettid(), ordering: .releasing)
                shared.body(shared)
                return nil
            }, context)
        guard created == 0 else {
            Unmanaged<RemoteUnwindTestThread>.fromOpaque(context).release()
            return nil
        }
        handle.withLock { $0 = thread }
        let deadline = perf_monotonic_ns() + 30_000_000_000
        while tid.load(ordering: .acquiring) == 0 && perf_monotonic_ns() < deadline { sched_yield() }
        let tid = tid.load(ordering: .acquiring)
        return tid == 0 ? nil : tid
    }

    /// Asks the thread to finish and joins it.
    func finish() {
        stop.store(true, ordering: .releasing)
        if let thread = handle.withLock({ $0 }) { pthread_join(thread, nil) }
    }

    /// Runs `call` until the test has what it needs, recording every outcome.
    @inline(never)
    func repeatUntilStopped(_ call: () -> RemoteUnwindTestOutcome) {
        repeat {
            let outcome = call()
            outcomes.withLock { $0.append(outcome) }
        } while !stop.load(ordering: .acquiring)
    }
}

/// Polls the syscall line of `tid` until it is blocked in system call `nr` (any call when nil).
/// No sleeping: a generous deadline bounds the wait instead.
func remoteUnwindTestWaitBlocked(_ tid: Int32, nr: [Int64]?, seconds: UInt64 = 30) -> Bool {
    let deadline = perf_monotonic_ns() + seconds * 1_000_000_000
    var call = perf_thread_syscall()
    while perf_monotonic_ns() < deadline {
        if perf_thread_read_syscall(tid, &call) == 0 && call.state == Int32(PERF_THREAD_BLOCKED)
            && (nr == nil || nr!.contains(call.nr))
        {
            return true
        }
        sched_yield()
    }
    return false
}

/// One unwound frame: the address and its demangled name ("" when unknown).
struct RemoteUnwindTestFrame: CustomStringConvertible {
    var address: UInt
    var name: String
    var image: String
    var description: String { "0x\(String(address, radix: 16)) \(name) (\(image.split(separator: "/").last ?? ""))" }
}

func remoteUnwindTestSymbolicate(_ addresses: [UInt]) -> [RemoteUnwindTestFrame] {
    addresses.enumerated().map { index, address in
        // Return addresses point after their call: name the byte before.
        let lookup = index > 0 ? address - 1 : address
        var symbol = [CChar](repeating: 0, count: 1024)
        var image = [CChar](repeating: 0, count: 512)
        var offset: UInt = 0
        let found = perf_symbolicate(lookup, &symbol, symbol.count, &image, image.count, &offset)
        let path = String(decoding: image.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard found == 1 else { return RemoteUnwindTestFrame(address: address, name: "", image: path) }
        let length = symbol.firstIndex(of: 0) ?? symbol.count
        let mangled = String(decoding: symbol[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var name = mangled
        if let demangled = swift_demangle(symbol, length, nil, nil, 0) {
            name = String(cString: demangled)
            free(demangled)
        }
        return RemoteUnwindTestFrame(address: address, name: name, image: path)
    }
}

/// Unwinds `tid` once it is blocked in one of `nr`, retrying while the call ends under the
/// unwind (the thread repeats it). Returns the frames, or the last error code.
func remoteUnwindTestUnwind(_ tid: Int32, nr: [Int64]) -> (count: Int32, frames: [RemoteUnwindTestFrame]) {
    var addresses = [UInt](repeating: 0, count: Int(PERF_STACK_MAX_FRAMES))
    var call = perf_thread_syscall()
    var count: Int32 = -1
    let deadline = perf_monotonic_ns() + 60_000_000_000
    while perf_monotonic_ns() < deadline {
        guard remoteUnwindTestWaitBlocked(tid, nr: nr) else { break }
        count = addresses.withUnsafeMutableBufferPointer {
            perf_remote_unwind(tid, $0.baseAddress, Int32($0.count), &call)
        }
        if count > 0 {
            #expect(addresses[0] == UInt(call.pc))
            return (count, remoteUnwindTestSymbolicate(Array(addresses[..<Int(count)])))
        }
        if count != -1 && count != -2 { break }  // -1/-2: the call ended meanwhile; catch the next one
    }
    return (count, [])
}

/// perf_remote_unwind walks stacks on x86_64 only (elsewhere it returns -3).
#if arch(x86_64)
    let remoteUnwindTestSupported = true
#else
    let remoteUnwindTestSupported = false
#endif

/// x86_64 system call numbers the blocking kinds end up in.
enum RemoteUnwindTestSyscall {
    static let read: Int64 = 0
    static let poll: Int64 = 7
    static let futex: Int64 = 202
    static let epollWait: Int64 = 232
    static let clockNanosleep: Int64 = 230
    static let nanosleep: Int64 = 35
    static let ppoll: Int64 = 271
    static let epollPwait: Int64 = 281
    static let futexWaitv: Int64 = 449
}
