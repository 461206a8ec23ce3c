// What a thread blocked in a system call waits for, in words: the call's number and arguments
// come from `/proc/self/task/<tid>/syscall`, the memory they point to is read with
// `perf_read_memory` (never a fault), file descriptors are named from `/proc/self/fd`. Nothing
// here signals or wakes the thread.
import CPerfShims
import Glibc

enum WaitDescription {
    /// How to name and sample a lock's holder: its thread info and, when its stack can be read
    /// without a signal, its culprit.
    typealias HolderProbe = (Int32) -> (thread: Perf.HangWatchdog.ThreadInfo, culprit: String?)

    /// The wait of a thread whose syscall line is `call`, with `frames` (symbolicated, innermost
    /// first) telling which library call made it; `nil` when the thread was not blocked.
    static func describe(
        _ call: perf_thread_syscall, frames: [Perf.HangWatchdog.Frame], holder: HolderProbe
    ) -> Perf.HangWatchdog.Wait? {
        guard call.state == Int32(PERF_THREAD_BLOCKED) else { return nil }
        let name = SyscallNames.name(call.nr)
        let args = withUnsafeBytes(of: call.args) { Array($0.bindMemory(to: UInt64.self)) }
        var wait = Perf.HangWatchdog.Wait(call: name, on: nil, owner: nil, ownerCulprit: nil)
        switch name {
        case "nanosleep":
            wait.on = timespecText(at: args[0])
        case "clock_nanosleep":
            let absolute = args[1] & UInt64(TIMER_ABSTIME) != 0
            wait.on = absolute ? "until a deadline" : timespecText(at: args[2])
        case "futex":
            describeFutex(args, frames: frames, holder: holder, into: &wait)
        case "poll":
            wait.on = pollText(
                fds: args[0], count: args[1], timeout: timeoutText(milliseconds: Int32(truncatingIfNeeded: args[2])))
        case "ppoll":
            wait.on = pollText(
                fds: args[0], count: args[1], timeout: args[2] == 0 ? "no timeout" : timespecText(at: args[2]))
        case "select":
            wait.on = "\(args[0]) fds; " + (args[4] == 0 ? "no timeout" : timevalText(at: args[4]) ?? "timeout")
        case "pselect6":
            wait.on = "\(args[0]) fds; " + (args[4] == 0 ? "no timeout" : timespecText(at: args[4]) ?? "timeout")
        case "epoll_wait", "epoll_pwait":
            wait.on = fdText(args[0]) + "; " + timeoutText(milliseconds: Int32(truncatingIfNeeded: args[3]))
        case "epoll_pwait2":
            wait.on = fdText(args[0]) + "; " + (args[3] == 0 ? "no timeout" : timespecText(at: args[3]) ?? "timeout")
        case "read", "readv", "pread64", "write", "writev", "pwrite64", "recvfrom", "recvmsg", "sendto", "sendmsg",
            "accept", "accept4", "connect", "fsync", "fdatasync", "flock", "fcntl", "ioctl", "io_uring_enter":
            wait.on = fdText(args[0])
        default:
            break
        }
        return wait
    }

    // MARK: - futex

    private static func describeFutex(
        _ args: [UInt64], frames: [Perf.HangWatchdog.Frame], holder: HolderProbe,
        into wait: inout Perf.HangWatchdog.Wait
    ) {
        let operation = args[1] & 0x7f  // FUTEX_CMD_MASK: without PRIVATE and CLOCK_REALTIME
        let address = UInt(args[0])
        var owner: Int32?
        var what: String
        switch operation {
        case 6, 13, 11:  // LOCK_PI, LOCK_PI2, WAIT_REQUEUE_PI: the word holds the owner's tid
            what = "priority-inheritance lock (Swift Mutex, pthread PI mutex)"
            owner = readUInt32(address).map { Int32(bitPattern: $0 & 0x3fff_ffff) }
        default:
            what = futexPurpose(frames)
            if what == "pthread mutex" {
                // glibc's pthread_mutex_t: int __lock; unsigned __count; int __owner; …
                owner = readUInt32(address + 8).map { Int32(bitPattern: $0) }
            }
        }
        if let owner, owner > 0 {
            let (thread, culprit) = holder(owner)
            wait.owner = thread
            wait.ownerCulprit = culprit
            let name = thread.name.isEmpty ? "" : "\(thread.name) "
            what += " held by \(name)(tid \(owner))"
        }
        wait.on = what
    }

    /// Which library primitive made a plain futex wait, from the nearest frames that name one.
    static func futexPurpose(_ frames: [Perf.HangWatchdog.Frame]) -> String {
        let purposes: [(needle: String, purpose: String)] = [
            ("pthread_mutex", "pthread mutex"), ("lll_lock", "pthread mutex"), ("pthread_cond", "condition variable"),
            ("pthread_rwlock", "read-write lock"), ("sem_wait", "POSIX semaphore"),
            ("sem_timedwait", "POSIX semaphore"),
            ("sem_clockwait", "POSIX semaphore"), ("_dispatch_sema4", "DispatchSemaphore"),
            ("dispatch_semaphore", "DispatchSemaphore"), ("DispatchSemaphore", "DispatchSemaphore"),
            ("dispatch_group", "DispatchGroup"), ("_dispatch_thread_event", "dispatch sync or event"),
            ("_dispatch_sync", "DispatchQueue.sync"), ("pthread_join", "pthread_join"),
        ]
        for frame in frames.prefix(12) {
            guard let symbol = frame.symbol else { continue }
            if let match = purposes.first(where: { symbol.contains($0.needle) }) { return match.purpose }
        }
        return "futex word"
    }

    // MARK: - Arguments

    private static func readUInt32(_ address: UInt) -> UInt32? {
        var value: UInt32 = 0
        let copied = withUnsafeMutableBytes(of: &value) { perf_read_memory(address, $0.baseAddress, 4) }
        return copied == 4 ? value : nil
    }

    private static func readPair(_ address: UInt64) -> (Int64, Int64)? {
        var pair: (Int64, Int64) = (0, 0)
        let copied = withUnsafeMutableBytes(of: &pair) { perf_read_memory(UInt(address), $0.baseAddress, 16) }
        return copied == 16 ? pair : nil
    }

    private static func timespecText(at address: UInt64) -> String? {
        guard address != 0, let (seconds, nanos) = readPair(address), seconds >= 0, nanos >= 0 else { return nil }
        return durationText(nanos: Double(seconds) * 1e9 + Double(nanos))
    }

    private static func timevalText(at address: UInt64) -> String? {
        guard let (seconds, micros) = readPair(address), seconds >= 0, micros >= 0 else { return nil }
        return "timeout " + durationText(nanos: Double(seconds) * 1e9 + Double(micros) * 1e3)
    }

    private static func timeoutText(milliseconds: Int32) -> String {
        milliseconds < 0 ? "no timeout" : "timeout " + durationText(nanos: Double(milliseconds) * 1e6)
    }

    static func durationText(nanos: Double) -> String {
        if nanos >= 1e9 { return "\(trimmed(nanos / 1e9)) s" }
        if nanos >= 1e6 { return "\(trimmed(nanos / 1e6)) ms" }
        return "\(trimmed(nanos / 1e3)) µs"
    }

    private static func trimmed(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    /// `fd 7 → pipe:[1234]`, `fd 3 → socket:[99]`, `fd 9 → /var/lib/db/data.sqlite`.
    static func fdText(_ fd: UInt64) -> String {
        guard fd < 1 << 31 else { return "fd \(Int64(bitPattern: fd))" }
        var target = [CChar](repeating: 0, count: 256)
        let length = readlink("/proc/self/fd/\(fd)", &target, target.count - 1)
        guard length > 0 else { return "fd \(fd)" }
        let bytes = target.prefix(Int(length)).map { UInt8(bitPattern: $0) }
        let text = String(decoding: bytes, as: UTF8.self)
        if text.hasPrefix("socket:"), let peer = socketPeer(Int32(fd)) { return "fd \(fd) → socket \(peer)" }
        return "fd \(fd) → " + readableTarget(text)
    }

    private static func cText(_ text: [CChar]) -> String {
        String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The address at the other end of socket `fd` (`127.0.0.1:5432`, `[::1]:8080`, a Unix
    /// socket's path), from `getpeername`: a question to the kernel about this process's own
    /// descriptor, which the thread blocked on it never notices. `nil` for an unconnected socket.
    static func socketPeer(_ fd: Int32) -> String? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let got = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard got == 0 else { return nil }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafeBytes(of: storage) { raw -> String? in
                let address = raw.load(as: sockaddr_in.self)
                var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
                var ip = address.sin_addr
                guard inet_ntop(AF_INET, &ip, &text, socklen_t(text.count)) != nil else { return nil }
                return Self.cText(text) + ":\(UInt16(bigEndian: address.sin_port))"
            }
        case AF_INET6:
            return withUnsafeBytes(of: storage) { raw -> String? in
                let address = raw.load(as: sockaddr_in6.self)
                var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
                var ip = address.sin6_addr
                guard inet_ntop(AF_INET6, &ip, &text, socklen_t(text.count)) != nil else { return nil }
                return "[" + Self.cText(text) + "]:\(UInt16(bigEndian: address.sin6_port))"
            }
        case AF_UNIX:
            let pathLength = Int(length) - MemoryLayout<sa_family_t>.size
            guard pathLength > 1 else { return "unix" }
            return withUnsafeBytes(of: storage) { raw in
                let path = raw[MemoryLayout<sa_family_t>.size..<(MemoryLayout<sa_family_t>.size + pathLength)]
                return "unix " + String(decoding: path.prefix { $0 != 0 }, as: UTF8.self)
            }
        default:
            return nil
        }
    }

    /// The kernel's names for what is not a file, without the `type:[…]` form that reads like a
    /// URL scheme: `socket:[99]` → `socket 99`, `anon_inode:[eventpoll]` → `eventpoll`.
    static func readableTarget(_ target: String) -> String {
        guard !target.hasPrefix("/"), let colon = target.firstIndex(of: ":") else { return target }
        let kind = target[..<colon]
        var rest = target[target.index(after: colon)...]
        if rest.hasPrefix("["), rest.hasSuffix("]") { rest = rest.dropFirst().dropLast() }
        return kind == "anon_inode" ? String(rest) : "\(kind) \(rest)"
    }

    private static func pollText(fds: UInt64, count: UInt64, timeout: String?) -> String {
        var parts: [String] = []
        if count == 0 { parts.append("no fds") }
        for index in 0..<min(count, 8) {
            var entry: (Int32, Int16, Int16) = (0, 0, 0)
            let copied = withUnsafeMutableBytes(of: &entry) {
                perf_read_memory(UInt(fds) + UInt(index) * 8, $0.baseAddress, 8)
            }
            guard copied == 8 else { break }
            var events: [String] = []
            if entry.1 & Int16(POLLIN) != 0 { events.append("in") }
            if entry.1 & Int16(POLLOUT) != 0 { events.append("out") }
            parts.append(
                fdText(UInt64(UInt32(bitPattern: entry.0)))
                    + (events.isEmpty ? "" : " " + events.joined(separator: "/")))
        }
        if count > 8 { parts.append("… \(count) fds in all") }
        return parts.joined(separator: ", ") + "; " + (timeout ?? "timeout")
    }
}

/// System call numbers to names, for the calls a blocked thread is usually in.
enum SyscallNames {
    static func name(_ number: Int64) -> String {
        table[number] ?? "syscall \(number)"
    }

    #if arch(x86_64)
        private static let table: [Int64: String] = [
            0: "read", 1: "write", 7: "poll", 16: "ioctl", 17: "pread64", 18: "pwrite64", 19: "readv", 20: "writev",
            23: "select", 34: "pause", 35: "nanosleep", 42: "connect", 43: "accept", 44: "sendto", 45: "recvfrom",
            46: "sendmsg", 47: "recvmsg", 61: "wait4", 72: "fcntl", 73: "flock", 74: "fsync", 75: "fdatasync",
            128: "rt_sigtimedwait", 130: "rt_sigsuspend", 202: "futex", 230: "clock_nanosleep", 232: "epoll_wait",
            247: "waitid", 257: "openat", 270: "pselect6", 271: "ppoll", 281: "epoll_pwait", 288: "accept4",
            426: "io_uring_enter", 441: "epoll_pwait2",
        ]
    #elseif arch(arm64)
        private static let table: [Int64: String] = [
            22: "epoll_pwait", 25: "fcntl", 29: "ioctl", 32: "flock", 56: "openat", 63: "read", 64: "write",
            65: "readv",
            66: "writev", 67: "pread64", 68: "pwrite64", 72: "pselect6", 73: "ppoll", 82: "fsync", 83: "fdatasync",
            95: "waitid", 98: "futex", 101: "nanosleep", 115: "clock_nanosleep", 133: "rt_sigsuspend",
            137: "rt_sigtimedwait", 202: "accept", 203: "connect", 206: "sendto", 207: "recvfrom", 211: "sendmsg",
            212: "recvmsg", 242: "accept4", 260: "wait4", 426: "io_uring_enter", 441: "epoll_pwait2",
        ]
    #else
        private static let table: [Int64: String] = [:]
    #endif
}
