// The process figures of a diagnostic snapshot, read from /proc/self and /proc/pressure. Parsing
// is pure (text in, figures out) so tests feed it fixed procfs text.
import Glibc

/// Process-wide figures at one moment, from `/proc/self` (and `/proc/pressure/*` when the
/// kernel has pressure stall information).
///
/// Every figure is an integer so payloads and reports format them identically everywhere; a
/// figure the kernel did not provide is `nil` and left out of the JSON.
public struct ProcessFigures: Sendable, Equatable {
    /// Resident set size in bytes (`VmRSS`).
    public var rssBytes: Int64?
    /// Peak resident set size in bytes (`VmHWM`).
    public var peakRssBytes: Int64?
    /// User CPU time in milliseconds (`utime`).
    public var cpuUserMs: Int64?
    /// System CPU time in milliseconds (`stime`).
    public var cpuSystemMs: Int64?
    /// Voluntary context switches (waits).
    public var voluntaryContextSwitches: Int64?
    /// Involuntary context switches (preemptions).
    public var involuntaryContextSwitches: Int64?
    /// Minor page faults.
    public var minorFaults: Int64?
    /// Major page faults (disk reads).
    public var majorFaults: Int64?
    /// Threads of the process.
    public var threads: Int64?
    /// Open file descriptors.
    public var openFds: Int64?
    /// Pressure stall totals in microseconds, keyed `cpu.some`, `memory.full`, `io.some`, ….
    public var pressureTotalUs: [String: Int64]

    /// Empty figures.
    public init() { pressureTotalUs = [:] }

    /// Reads the running process's figures. Never fails: an unreadable file leaves its
    /// figures `nil`.
    public static func current() -> ProcessFigures {
        var figures = ProcessFigures()
        if let status = ProcProbe.read("/proc/self/status") { figures.applyStatus(status) }
        if let stat = ProcProbe.read("/proc/self/stat") {
            figures.applyStat(stat, ticksPerSecond: Int64(sysconf(Int32(_SC_CLK_TCK))))
        }
        figures.openFds = ProcessFigures.countEntries("/proc/self/fd")
        for resource in ["cpu", "memory", "io"] {
            if let text = ProcProbe.read("/proc/pressure/\(resource)") {
                figures.applyPressure(text, resource: resource)
            }
        }
        return figures
    }

    /// The number of entries of a directory (not `.` and `..`), or `nil` if it cannot be read.
    static func countEntries(_ path: String) -> Int64? {
        guard case .success(let names) = FileSyscalls.live.listDirectory(path) else { return nil }
        // The descriptor opendir holds is one of the entries counted.
        return max(Int64(names.count) - 1, 0)
    }

    /// Takes `VmRSS`, `VmHWM`, `Threads` and the context-switch counters from
    /// `/proc/self/status` text.
    mutating func applyStatus(_ text: String) {
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let words = parts[1].split(separator: " ").flatMap { $0.split(separator: "\t") }
            guard let number = words.first.flatMap({ Int64($0) }) else { continue }
            let kib = words.count > 1 && words[1] == "kB" ? number * 1024 : number
            switch parts[0] {
            case "VmRSS": rssBytes = kib
            case "VmHWM": peakRssBytes = kib
            case "Threads": threads = number
            case "voluntary_ctxt_switches": voluntaryContextSwitches = number
            case "nonvoluntary_ctxt_switches": involuntaryContextSwitches = number
            default: break
            }
        }
    }

    /// Takes faults and CPU times from `/proc/self/stat` text. The command name (field 2)
    /// may hold spaces and parentheses, so fields are counted after its last `)`.
    mutating func applyStat(_ text: String, ticksPerSecond: Int64) {
        guard let close = text.lastIndex(of: ")") else { return }
        // Fields after the name start at field 3 (state): index i here is field i + 3.
        let fields = text[text.index(after: close)...].split(separator: " ")
        func field(_ number: Int) -> Int64? {
            let index = number - 3
            return index < fields.count ? Int64(fields[index]) : nil
        }
        minorFaults = field(10)
        majorFaults = field(12)
        let ticks = max(ticksPerSecond, 1)
        cpuUserMs = field(14).map { $0 * 1000 / ticks }
        cpuSystemMs = field(15).map { $0 * 1000 / ticks }
    }

    /// Takes the `total=` of each `some`/`full` line of a `/proc/pressure/<resource>` file.
    mutating func applyPressure(_ text: String, resource: String) {
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ")
            guard let kind = words.first, kind == "some" || kind == "full" else { continue }
            for word in words where word.hasPrefix("total=") {
                if let total = Int64(word.dropFirst("total=".count)) {
                    pressureTotalUs["\(resource).\(kind)"] = total
                }
            }
        }
    }

    /// The JSON object, keys sorted, absent figures left out.
    var json: ReportJSON {
        var members: [String: ReportJSON] = [:]
        let named: [(String, Int64?)] = [
            ("rssBytes", rssBytes), ("peakRssBytes", peakRssBytes), ("cpuUserMs", cpuUserMs),
            ("cpuSystemMs", cpuSystemMs), ("voluntaryContextSwitches", voluntaryContextSwitches),
            ("involuntaryContextSwitches", involuntaryContextSwitches), ("minorFaults", minorFaults),
            ("majorFaults", majorFaults), ("threads", threads), ("openFds", openFds),
        ]
        for (key, value) in named { if let value { members[key] = .int(value) } }
        if !pressureTotalUs.isEmpty { members["pressureTotalUs"] = .object(pressureTotalUs.mapValues { .int($0) }) }
        return .object(members)
    }
}

extension ProcessFigures: Decodable {
    package enum CodingKeys: String, CodingKey {
        case rssBytes, peakRssBytes, cpuUserMs, cpuSystemMs, voluntaryContextSwitches, involuntaryContextSwitches
        case minorFaults, majorFaults, threads, openFds, pressureTotalUs
    }

    /// Reads the JSON object a payload carries; absent figures stay `nil`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init()
        rssBytes = try container.decodeIfPresent(Int64.self, forKey: .rssBytes)
        peakRssBytes = try container.decodeIfPresent(Int64.self, forKey: .peakRssBytes)
        cpuUserMs = try container.decodeIfPresent(Int64.self, forKey: .cpuUserMs)
        cpuSystemMs = try container.decodeIfPresent(Int64.self, forKey: .cpuSystemMs)
        voluntaryContextSwitches = try container.decodeIfPresent(Int64.self, forKey: .voluntaryContextSwitches)
        involuntaryContextSwitches = try container.decodeIfPresent(Int64.self, forKey: .involuntaryContextSwitches)
        minorFaults = try container.decodeIfPresent(Int64.self, forKey: .minorFaults)
        majorFaults = try container.decodeIfPresent(Int64.self, forKey: .majorFaults)
        threads = try container.decodeIfPresent(Int64.self, forKey: .threads)
        openFds = try container.decodeIfPresent(Int64.self, forKey: .openFds)
        pressureTotalUs = try container.decodeIfPresent([String: Int64].self, forKey: .pressureTotalUs) ?? [:]
    }
}
