// `perf-test-child watchdog-matrix on|off <dir> [kind,kind,…]`: the watchdog's "first, do no
// harm" matrix. For every kind of blocking call, a 600 ms block of that kind runs on a watched
// serial queue while two bystanders — the main thread and one other — make the same kind of call
// for 1 s. Every call records how long it took and what it returned, so the test can compare a
// run with the watchdog on (Perf installed in <dir>, ledger and all) against one without it: no
// call may be cut short (EINTR, an early return) and the watchdog must write exactly one hang per
// block, bracketing it, naming the blocking function and what it waited for. Every call is a
// measured span past its budget, so the span sampler reads every thread making one as well.
//
// `target=main|mainActor|pool` watches the main queue (the main thread runs `dispatchMain()`), the
// main actor or the cooperative pool (one block per pool thread) instead of a queue of its own.
//
// Output: one JSON line per kind (the function its hang must name, each call's result, errno and
// CLOCK_MONOTONIC start and end), then `done`.
import CPerfAllocCounter
import Foundation
import Glibc
import Perf
import PerfTestSupport

enum WatchdogMatrixChild {
    static let watchedMs = 600
    /// Long enough to span the watched block, the late ping that closes its hang (50 ms apart)
    /// and the hang line's write, with 350 ms to spare.
    static let bystanderMs = 1_000

    /// Each kind, and the function the hang line must name.
    static let kinds: [(name: String, function: String)] = [
        ("cpu", "matrixSpin"), ("usleep", "matrixUsleep"), ("nanosleep", "matrixNanosleep"), ("poll", "matrixPoll"),
        ("select", "matrixSelect"), ("epoll", "matrixEpollWait"), ("pipe-read", "matrixPipeRead"),
        ("socket-read", "matrixSocketRead"), ("semaphore", "matrixSemaphoreWait"),
        ("condition", "matrixConditionWait"), ("mutex", "matrixMutexLock"),
        ("dispatch-semaphore", "matrixDispatchSemaphoreWait"), ("thread-sleep", "matrixThreadSleep"),
        ("queue-sync", "matrixInsideSync"),
    ]

    /// Where the watched block runs.
    enum Target: String {
        case queue, main, mainActor, pool
    }

    static func run(_ arguments: [String]) -> Int32 {
        var positional = arguments.filter { !$0.hasPrefix("target=") }
        let targetName = arguments.first { $0.hasPrefix("target=") }.map { String($0.dropFirst(7)) } ?? "queue"
        guard positional.count >= 2, ["on", "off"].contains(positional[0]), let target = Target(rawValue: targetName)
        else {
            FileHandle.standardError.write(
                Data(
                    "usage: perf-test-child watchdog-matrix on|off <dir> [kinds] [target=queue|main|mainActor|pool]\n"
                        .utf8))
            return 2
        }
        if positional.count == 2 { positional.append(kinds.map(\.name).joined(separator: ",")) }
        let cases = positional
        guard target == .main || target == .mainActor else { return matrix(cases, target: target) }
        // The main queue is drained by `dispatchMain()`, as in a service; the cases run beside it.
        Thread { exit(matrix(cases, target: target)) }.start()
        dispatchMain()
    }

    private static func matrix(_ arguments: [String], target: Target) -> Int32 {
        let watching = arguments[0] == "on"
        let selected = Set(arguments[2].split(separator: ",").map(String.init))
        let queue = DispatchQueue(label: "matrix.watched")
        var watchdog: Perf.HangWatchdog?
        if watching {
            Perf.install(
                Perf.Configuration(
                    directory: URL(fileURLWithPath: arguments[1]), app: Perf.AppInfo(name: "matrix", version: "1"),
                    recording: .enabled, ledgerCapBytes: 16 << 20))
            let monitored: Perf.HangWatchdog.Target
            switch target {
            case .queue: monitored = .queue(queue)
            case .main: monitored = .main
            case .mainActor: monitored = .mainActor
            case .pool: monitored = .cooperativePool
            }
            watchdog = Perf.HangWatchdog(monitoring: monitored)
            watchdog?.start()
        }
        // Blocks start at a random point between two pings (seeded, printed), as a program's do.
        var random = SeededRandom(seed: UInt64(DispatchTime.now().uptimeNanoseconds))
        for (kind, function) in kinds where selected.contains(kind) {
            // Let the queue answer a few pings first, so each block starts from an idle queue.
            settle(watchdog, pings: 3)
            usleep(useconds_t(random.next() % 50_000))
            let signalsBefore = watchdog?.statistics.signalsSent ?? 0
            let started = Date().timeIntervalSince1970
            let calls = runCase(kind, queue: queue, target: target)
            settle(watchdog, pings: 3)
            let ended = Date().timeIntervalSince1970
            let line: [String: Any] = [
                "kind": kind, "function": function, "startedMs": Int64(started * 1000), "endedMs": Int64(ended * 1000),
                "calls": calls.map(\.json), "signals": (watchdog?.statistics.signalsSent ?? 0) - signalsBefore,
            ]
            emit(line)
        }
        Perf.shutdown()
        FileHandle.standardOutput.write(Data("done\n".utf8))
        return 0
    }

    /// Waits until the watchdog has sent `pings` more pings (each one answered before the next is
    /// sent): the previous episode is closed and the queue is idle again.
    private static func settle(_ watchdog: Perf.HangWatchdog?, pings: UInt64) {
        guard let watchdog else { return }
        let target = watchdog.statistics.pingsSent + pings
        let ready = DispatchSemaphore(value: 0)
        Thread {
            while watchdog.statistics.pingsSent < target { usleep(5_000) }
            ready.signal()
        }.start()
        ready.wait()
    }

    private static func emit(_ object: [String: Any]) {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }

    /// One call's outcome.
    struct Call {
        var role: String
        var requestedMs: Int
        var result: Int
        var error: Int32
        /// CLOCK_MONOTONIC at the call's start and end: the pool is blocked only while all its
        /// blocks overlap.
        var startNanos: UInt64
        var endNanos: UInt64
        var json: [String: Any] {
            [
                "role": role, "requestedMs": requestedMs, "result": result, "errno": Int(error),
                "startNs": startNanos, "endNs": endNanos,
            ]
        }
    }

    /// The watched block on the target, one bystander thread and the calling thread (the main
    /// thread, unless the main queue is the target), all at once.
    private static func runCase(_ kind: String, queue: DispatchQueue, target: Target) -> [Call] {
        let results = ResultBox()
        let group = DispatchGroup()
        let role = target == .queue ? "main" : "caller"
        if target != .queue {
            // The pool needs every one of its threads blocked before a ping waits.
            let blocks = target == .pool ? max(1, ProcessInfo.processInfo.activeProcessorCount) : 1
            for _ in 0..<blocks {
                group.enter()
                let work: @Sendable () -> Void = {
                    results.add(call(kind, role: "watched", ms: watchedMs))
                    group.leave()
                }
                switch target {
                case .main: DispatchQueue.main.async(execute: work)
                case .mainActor: Task { @MainActor in work() }
                default: Task.detached { work() }
                }
            }
        } else if kind == "queue-sync" {
            group.enter()
            // The block runs on the caller's thread, inside `sync`: the queue is held by it.
            Thread {
                queue.sync { results.add(call("queue-sync", role: "watched", ms: watchedMs)) }
                group.leave()
            }.start()
        } else {
            group.enter()
            queue.async {
                results.add(call(kind, role: "watched", ms: watchedMs))
                group.leave()
            }
        }
        group.enter()
        Thread {
            results.add(call(kind, role: "bystander", ms: bystanderMs))
            group.leave()
        }.start()
        results.add(call(kind, role: role, ms: bystanderMs))
        group.wait()
        return results.all
    }

    private final class ResultBox: @unchecked Sendable {
        private let lock = NSLock()
        private var calls: [Call] = []
        func add(_ call: Call) { lock.withLock { calls.append(call) } }
        var all: [Call] { lock.withLock { calls } }
    }

    /// Every call runs inside a measured span past its 20 ms budget: with Perf on, the span
    /// sampler reads each calling thread every 10 ms while it blocks (or spins), beside the
    /// watchdog, and neither may cut the call short.
    private static func call(_ kind: String, role: String, ms: Int) -> Call {
        Perf.measure("matrix.call", slowMs: 20) { unmeasuredCall(kind, role: role, ms: ms) }
    }

    private static func unmeasuredCall(_ kind: String, role: String, ms: Int) -> Call {
        let start = DispatchTime.now().uptimeNanoseconds
        var (result, error): (Int, Int32) = (0, 0)
        switch kind {
        case "cpu": result = matrixSpin(ms)
        case "usleep": (result, error) = matrixUsleep(ms)
        case "nanosleep": (result, error) = matrixNanosleep(ms)
        case "poll": (result, error) = matrixPoll(ms)
        case "select": (result, error) = matrixSelect(ms)
        case "epoll": (result, error) = matrixEpollWait(ms)
        case "pipe-read": (result, error) = matrixPipeRead(ms)
        case "socket-read": (result, error) = matrixSocketRead(ms)
        case "semaphore": (result, error) = matrixSemaphoreWait(ms)
        case "condition": result = matrixConditionWait(ms)
        case "mutex": result = matrixMutexLock(ms)
        case "dispatch-semaphore": result = matrixDispatchSemaphoreWait(ms)
        case "thread-sleep": result = matrixThreadSleep(ms)
        case "queue-sync":
            if role == "watched" {
                result = matrixInsideSync(ms)
            } else {
                // Bystanders hold queues of their own with `sync`.
                let own = DispatchQueue(label: "matrix.bystander.\(role)")
                own.sync { result = matrixInsideSync(ms) }
            }
        default: result = -99
        }
        let end = DispatchTime.now().uptimeNanoseconds
        return Call(
            role: role, requestedMs: ms, result: result, error: error,
            startNanos: start, endNanos: end)
    }
}

// MARK: - The blocking calls, one function each so a hang line can name it

private func deadline(_ ms: Int) -> UInt64 { DispatchTime.now().uptimeNanoseconds + UInt64(ms) * 1_000_000 }

/// Sleeps until an absolute CLOCK_MONOTONIC time, restarting after signals: helpers that must
/// not be the thing measured.
private func sleepUntil(_ uptimeNanos: UInt64) {
    var spec = timespec(tv_sec: Int(uptimeNanos / 1_000_000_000), tv_nsec: Int(uptimeNanos % 1_000_000_000))
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &spec, nil) == EINTR {}
}

private func realtimeDeadline(_ ms: Int) -> timespec {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    let total = Int(now.tv_nsec) + (ms % 1000) * 1_000_000
    return timespec(tv_sec: now.tv_sec + ms / 1000 + total / 1_000_000_000, tv_nsec: total % 1_000_000_000)
}

@inline(never) func matrixSpin(_ ms: Int) -> Int {
    let end = deadline(ms)
    var spins = 0
    while DispatchTime.now().uptimeNanoseconds < end { spins &+= 1 }
    return 0
}

@inline(never) func matrixUsleep(_ ms: Int) -> (Int, Int32) {
    let result = usleep(useconds_t(ms * 1000))
    return (Int(result), result == 0 ? 0 : errno)
}

@inline(never) func matrixNanosleep(_ ms: Int) -> (Int, Int32) {
    var request = timespec(tv_sec: ms / 1000, tv_nsec: (ms % 1000) * 1_000_000)
    var remaining = timespec()
    let result = nanosleep(&request, &remaining)
    return (Int(result), result == 0 ? 0 : errno)
}

@inline(never) func matrixPoll(_ ms: Int) -> (Int, Int32) {
    let result = poll(nil, 0, Int32(ms))
    return (Int(result), result < 0 ? errno : 0)
}

@inline(never) func matrixSelect(_ ms: Int) -> (Int, Int32) {
    var timeout = timeval(tv_sec: ms / 1000, tv_usec: (ms % 1000) * 1000)
    let result = select(0, nil, nil, nil, &timeout)
    return (Int(result), result < 0 ? errno : 0)
}

@inline(never) func matrixEpollWait(_ ms: Int) -> (Int, Int32) {
    var error: Int32 = 0
    let result = perf_test_epoll_wait(Int32(ms), &error)
    return (Int(result), error)
}

/// Reads one byte from a pipe a timer thread writes at the deadline.
@inline(never) func matrixPipeRead(_ ms: Int) -> (Int, Int32) {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { return (-1, errno) }
    defer {
        close(fds[0])
        close(fds[1])
    }
    let end = deadline(ms)
    let writer = fds[1]
    Thread {
        sleepUntil(end)
        var byte: UInt8 = 1
        _ = write(writer, &byte, 1)
    }.start()
    var byte: UInt8 = 0
    let result = read(fds[0], &byte, 1)
    return (result, result < 0 ? errno : 0)
}

/// A socket read with SO_RCVTIMEO: returns EAGAIN at the timeout, EINTR if a signal cut it.
@inline(never) func matrixSocketRead(_ ms: Int) -> (Int, Int32) {
    var fds: [Int32] = [0, 0]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { return (-1, errno) }
    defer {
        close(fds[0])
        close(fds[1])
    }
    var timeout = timeval(tv_sec: ms / 1000, tv_usec: (ms % 1000) * 1000)
    setsockopt(fds[0], SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var byte: UInt8 = 0
    let result = read(fds[0], &byte, 1)
    return (result, result < 0 ? errno : 0)
}

@inline(never) func matrixSemaphoreWait(_ ms: Int) -> (Int, Int32) {
    var semaphore = sem_t()
    sem_init(&semaphore, 0, 0)
    defer { sem_destroy(&semaphore) }
    var until = realtimeDeadline(ms)
    let result = sem_timedwait(&semaphore, &until)
    return (Int(result), result < 0 ? errno : 0)
}

@inline(never) func matrixConditionWait(_ ms: Int) -> Int {
    var mutex = pthread_mutex_t()
    var condition = pthread_cond_t()
    pthread_mutex_init(&mutex, nil)
    pthread_cond_init(&condition, nil)
    defer {
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&mutex)
    }
    var until = realtimeDeadline(ms)
    pthread_mutex_lock(&mutex)
    let result = pthread_cond_timedwait(&condition, &mutex, &until)
    pthread_mutex_unlock(&mutex)
    return Int(result)
}

/// The thread holding the mutex `matrixMutexLock` waits for.
@inline(never) func matrixMutexHolder(
    _ mutex: UnsafeMutablePointer<pthread_mutex_t>, until: UInt64, ready: DispatchSemaphore
) {
    pthread_mutex_lock(mutex)
    ready.signal()
    var spec = timespec(tv_sec: Int(until / 1_000_000_000), tv_nsec: Int(until % 1_000_000_000))
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &spec, nil) == EINTR {}
    pthread_mutex_unlock(mutex)
}

/// Locks a mutex another thread holds until the deadline.
@inline(never) func matrixMutexLock(_ ms: Int) -> Int {
    let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    pthread_mutex_init(mutex, nil)
    let end = deadline(ms)
    let ready = DispatchSemaphore(value: 0)
    let address = UInt(bitPattern: mutex)
    let holder = Thread {
        matrixMutexHolder(UnsafeMutablePointer(bitPattern: address)!, until: end, ready: ready)
    }
    holder.name = "matrix-holder"
    holder.start()
    ready.wait()
    let result = pthread_mutex_lock(mutex)
    pthread_mutex_unlock(mutex)
    // The holder has unlocked; it exits on its own (never destroy a mutex it might still touch).
    return Int(result)
}

@inline(never) func matrixDispatchSemaphoreWait(_ ms: Int) -> Int {
    let semaphore = DispatchSemaphore(value: 0)
    return semaphore.wait(timeout: .now() + .milliseconds(ms)) == .timedOut ? 0 : 1
}

@inline(never) func matrixThreadSleep(_ ms: Int) -> Int {
    Thread.sleep(forTimeInterval: Double(ms) / 1000)
    return 0
}

@inline(never) func matrixInsideSync(_ ms: Int) -> Int {
    Int(usleep(useconds_t(ms * 1000)))
}
