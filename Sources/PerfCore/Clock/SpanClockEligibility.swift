// Whether the TSC may time spans: the kernel itself trusts it, and the CPU says it is invariant.
import CPerfShims
import Foundation

/// The inputs that decide whether ``SpanClock`` may use the TSC, injectable for tests.
public struct SpanClockHost: Sendable {
    /// The kernel's current clocksource (`/sys/devices/system/clocksource/clocksource0/current_clocksource`).
    public var clocksource: @Sendable () -> String?
    /// `/proc/cpuinfo`, or as much of it as holds the first `flags` line.
    public var cpuinfo: @Sendable () -> String?
    /// The value of `PERF_CLOCK`: `monotonic` forces CLOCK_MONOTONIC.
    public var perfClockVariable: @Sendable () -> String?
    /// Whether this build can read a TSC at all (x86_64 only).
    public var tscSupported: Bool

    public init(
        clocksource: @escaping @Sendable () -> String?, cpuinfo: @escaping @Sendable () -> String?,
        perfClockVariable: @escaping @Sendable () -> String?, tscSupported: Bool = perf_tsc_supported() != 0
    ) {
        self.clocksource = clocksource
        self.cpuinfo = cpuinfo
        self.perfClockVariable = perfClockVariable
        self.tscSupported = tscSupported
    }

    /// This machine.
    public static let system = SpanClockHost(
        clocksource: {
            try? String(
                contentsOfFile: "/sys/devices/system/clocksource/clocksource0/current_clocksource", encoding: .utf8)
        },
        cpuinfo: { try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) },
        perfClockVariable: { ProcessInfo.processInfo.environment["PERF_CLOCK"] })

    /// Why the TSC may not be used, or `nil` when it may.
    public func ineligibility() -> String? {
        if let forced = perfClockVariable()?.trimmingCharacters(in: .whitespacesAndNewlines).lowercased(),
            forced == "monotonic"
        {
            return "PERF_CLOCK=monotonic"
        }
        return Self.ineligibility(tscSupported: tscSupported, clocksource: clocksource(), cpuinfo: cpuinfo())
    }

    /// The decision from the raw texts: the clocksource must be exactly `tsc` and the first `flags`
    /// line must list both `constant_tsc` and `nonstop_tsc`.
    public static func ineligibility(tscSupported: Bool, clocksource: String?, cpuinfo: String?) -> String? {
        guard tscSupported else { return "no TSC on this architecture" }
        guard let source = clocksource?.trimmingCharacters(in: .whitespacesAndNewlines), !source.isEmpty else {
            return "clocksource unreadable"
        }
        guard source == "tsc" else { return "clocksource is \(source), not tsc" }
        guard let flags = cpuFlags(cpuinfo) else { return "no flags line in /proc/cpuinfo" }
        let missing = ["constant_tsc", "nonstop_tsc"].filter { !flags.contains($0) }
        guard missing.isEmpty else { return "CPU lacks \(missing.joined(separator: " and "))" }
        return nil
    }

    /// The words of the first `flags : …` line of a cpuinfo text.
    static func cpuFlags(_ cpuinfo: String?) -> Set<Substring>? {
        guard let cpuinfo else { return nil }
        for line in cpuinfo.split(separator: "\n", omittingEmptySubsequences: true) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            guard line[..<colon].trimmingCharacters(in: .whitespaces) == "flags" else { continue }
            return Set(line[line.index(after: colon)...].split(separator: " "))
        }
        return nil
    }
}
