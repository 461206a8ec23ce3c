// Small reads of /proc/self for the watchdog: a thread's name, state and wait channel, and
// whether a debugger is attached. Each reads a few hundred bytes; none runs on a hot path.
import CPerfShims
import Glibc

enum ProcProbe {
    /// The whole content of a small procfs file (their reported size is 0, so read until EOF).
    static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `TracerPid` from `/proc/self/status` is non-zero.
    static func debuggerAttached() -> Bool {
        guard let status = read("/proc/self/status") else { return false }
        for line in status.split(separator: "\n") where line.hasPrefix("TracerPid:") {
            return line.dropFirst("TracerPid:".count).trimmingSpaces != "0"
        }
        return false
    }

    /// Name, state and wait channel of one thread of this process.
    static func thread(_ tid: Int32) -> Perf.HangWatchdog.ThreadInfo {
        var info = Perf.HangWatchdog.ThreadInfo(tid: tid, name: "", state: nil, waitChannel: nil)
        // `stat` is "tid (comm) S …"; comm may itself contain ") ", so split at the last one.
        if let stat = read("/proc/self/task/\(tid)/stat"), let open = stat.firstIndex(of: "("),
            let close = stat.lastIndex(of: ")")
        {
            info.name = String(stat[stat.index(after: open)..<close])
            let rest = stat[stat.index(after: close)...].trimmingSpaces
            info.state = rest.first.map { String($0) }
        }
        if let channel = read("/proc/self/task/\(tid)/wchan") {
            let trimmed = channel.trimmingSpaces
            // "0" means running or not waiting; an empty read means the kernel hides it.
            if !trimmed.isEmpty && trimmed != "0" { info.waitChannel = String(trimmed) }
        }
        return info
    }

    /// The kernel thread ids of this process (`/proc/self/task`), at most `limit` of them.
    static func threadIDs(limit: Int) -> [Int32] {
        guard let directory = opendir("/proc/self/task") else { return [] }
        defer { closedir(directory) }
        var tids: [Int32] = []
        while tids.count < limit, let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let tid = Int32(name) { tids.append(tid) }
        }
        return tids
    }

    /// CPU time the calling thread has used.
    static func threadCPUNanos() -> UInt64 {
        var spec = timespec()
        guard clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec) == 0 else { return 0 }
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}

extension StringProtocol {
    fileprivate var trimmingSpaces: Substring {
        let scalars = Substring(self)
        let start = scalars.firstIndex { !$0.isWhitespace } ?? scalars.endIndex
        let end = scalars.lastIndex { !$0.isWhitespace }.map { scalars.index(after: $0) } ?? start
        return start < end ? scalars[start..<end] : ""
    }
}
