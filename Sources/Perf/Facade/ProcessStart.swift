// How long ago this process started, from /proc/self/stat, for `Perf.markReady()`.
import CPerfShims
import Foundation

enum ProcessStart {
    /// Nanoseconds since the kernel started this process, or `nil` when /proc cannot tell.
    static func elapsedNanos() -> UInt64? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let startTicks = startTimeTicks(fromStat: stat)
        else { return nil }
        let ticksPerSecond = UInt64(max(1, sysconf(Int32(_SC_CLK_TCK))))
        let startNanos = startTicks.multipliedReportingOverflow(by: 1_000_000_000 / ticksPerSecond)
        guard !startNanos.overflow else { return nil }
        let now = perf_boottime_ns()
        return now > startNanos.partialValue ? now - startNanos.partialValue : 0
    }

    /// Field 22 (`starttime`, clock ticks after boot) of a `/proc/<pid>/stat` line. The command name
    /// in field 2 may contain spaces and parentheses, so fields are counted after its last `)`.
    static func startTimeTicks(fromStat stat: String) -> UInt64? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state); starttime is field 22.
        guard fields.count > 19 else { return nil }
        return UInt64(fields[19])
    }
}
