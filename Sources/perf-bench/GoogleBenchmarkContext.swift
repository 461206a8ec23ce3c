// The `context` object of Google Benchmark JSON: the machine as `benchmark` itself describes it
// (CPUs, MHz, caches, load, build type), read from /proc and /sys, plus perf-bench's command.
import Foundation
import Glibc
import Perf

enum GoogleBenchmarkContext {
    /// The context of a run described by `environment`, in Google Benchmark's keys.
    static func make(_ environment: RunEnvironment) -> [String: Any] {
        var load = [Double](repeating: 0, count: 3)
        let loads = getloadavg(&load, 3)
        return [
            "date": gbenchDate(environment.date),
            "host_name": hostName(),
            "executable": CommandLine.arguments.first ?? "perf-bench",
            "num_cpus": environment.cores,
            "mhz_per_cpu": cpuMHz(),
            "cpu_scaling_enabled": cpuScalingEnabled(),
            "caches": caches(),
            "load_avg": Array(load.prefix(max(0, Int(loads)))),
            "library_build_type": environment.buildConfiguration,
            "json_schema_version": 1,
            // Beyond Google Benchmark's keys: how the figures were made, for `perf-report check`.
            "cpu_model": environment.cpuModel,
            "swift_version": environment.swiftVersion,
            "kernel": environment.kernel,
            "perf_bench_command": environment.command,
        ]
    }

    /// Google Benchmark writes the local time with a numeric offset (`2026-12-02T17:02:03+00:00`).
    static func gbenchDate(_ iso8601: String) -> String {
        let date = ISO8601DateFormatter().date(from: iso8601) ?? Date()
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ssxxx"
        return formatter.string(from: date)
    }

    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "unknown" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The first `cpu MHz` of /proc/cpuinfo, rounded; 0 when the kernel does not say.
    static func cpuMHz() -> Int {
        let text = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        for line in text.split(separator: "\n") where line.hasPrefix("cpu MHz") {
            let value = line.split(separator: ":").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            return Int(Double(value)?.rounded() ?? 0)
        }
        return 0
    }

    /// Google Benchmark's test: a governor other than `performance` scales the clock.
    static func cpuScalingEnabled() -> Bool {
        let path = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"
        guard let governor = try? String(contentsOfFile: path, encoding: .utf8) else { return false }
        return governor.trimmingCharacters(in: .whitespacesAndNewlines) != "performance"
    }

    /// CPU 0's caches from sysfs: type, level, size in bytes, CPUs sharing it.
    static func caches() -> [[String: Any]] {
        let root = "/sys/devices/system/cpu/cpu0/cache"
        let indexes = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .filter { $0.hasPrefix("index") }.sorted()
        return indexes.compactMap { index -> [String: Any]? in
            func read(_ name: String) -> String? {
                (try? String(contentsOfFile: "\(root)/\(index)/\(name)", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
            guard let type = read("type"), let level = read("level").flatMap({ Int($0) }),
                let size = read("size").flatMap(bytes)
            else { return nil }
            return ["type": type, "level": level, "size": size, "num_sharing": cpuCount(read("shared_cpu_list") ?? "")]
        }
    }

    /// `48K`, `1024K`, `32M` as bytes.
    static func bytes(_ text: String) -> Int? {
        let scales: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        guard let last = text.last else { return nil }
        if let scale = scales[last] { return Int(text.dropLast()).map { $0 * scale } }
        return Int(text)
    }

    /// The number of CPUs in a sysfs list such as `0-3,8`.
    static func cpuCount(_ list: String) -> Int {
        list.split(separator: ",").reduce(0) { total, part in
            let bounds = part.split(separator: "-").compactMap { Int($0) }
            guard let first = bounds.first else { return total }
            return total + (bounds.count == 2 ? bounds[1] - first + 1 : 1)
        }
    }
}
