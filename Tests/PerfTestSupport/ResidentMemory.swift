// Resident memory by kind, from /proc/self/status: what tools and benchmarks read to say what a
// rise in RSS was made of.
import Foundation

/// `VmRSS` and its parts, in bytes (0 where the kernel does not report one).
public struct ResidentMemory: Sendable, Equatable {
    /// Resident set size (`VmRSS`).
    public var rss = 0
    /// Anonymous pages: heap, stacks (`RssAnon`).
    public var anon = 0
    /// Mapped files, such as the span memory (`RssFile`).
    public var file = 0
    /// Shared memory (`RssShmem`).
    public var shmem = 0

    public init() {}

    /// The running process's figures; all 0 when /proc/self/status cannot be read.
    public static func current() -> ResidentMemory {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else {
            return ResidentMemory()
        }
        return parse(text)
    }

    /// The figures of `/proc/self/status` text.
    public static func parse(_ text: String) -> ResidentMemory {
        var memory = ResidentMemory()
        for line in text.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == ":" || $0 == " " || $0 == "\t" })
            guard parts.count >= 2, let kib = Int(parts[1]) else { continue }
            switch parts[0] {
            case "VmRSS": memory.rss = kib * 1024
            case "RssAnon": memory.anon = kib * 1024
            case "RssFile": memory.file = kib * 1024
            case "RssShmem": memory.shmem = kib * 1024
            default: break
            }
        }
        return memory
    }
}
