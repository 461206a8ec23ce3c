// Uprobe events for a program's USDT probes, written to tracefs's `uprobe_events` so that the
// system's `perf record` can record them with their strings fetched (`name=+0(%ax):string`), and
// removed again afterwards. Also finds `perf` and makes sure tracefs is mounted.
import Foundation
import Glibc

/// The uprobe events of one attach: group `perf_attach_<pid>`, one event per probe site.
package struct ProbeEvents: Sendable {
    /// Why the probes of a process cannot be recorded here; the message names what is missing.
    package struct Unavailable: Error, CustomStringConvertible, Equatable {
        package var description: String
        package init(_ description: String) { self.description = description }
    }

    /// The argument names of each probe, in the note's order; `:string` ones are fetched as strings.
    package static let argumentNames: [String: [String]] = [
        "span_end": ["name:string", "ns", "budget_ns", "exit", "over"],
        "span_begin": ["name:string", "budget_ns"],
        "hang": ["target:string", "lower_ms", "upper_ms", "culprit:string"],
        "hitch": ["target:string", "lower_ms", "upper_ms", "culprit:string"],
        "note": ["name:string"],
        "session_start": ["pid"],
        "session_end": ["pid"],
    ]

    package static let tracefs = "/sys/kernel/tracing"

    /// The group the events live in (`perf record -e '<group>:*'`).
    package let group: String
    /// `event name` → probe name (`span_end_3` → `span_end`).
    package private(set) var probeOfEvent: [String: String] = [:]

    /// Defines one event per site of `sites` in `executable`; on failure removes what it defined.
    package init(sites: [ProbeSite], executable: String, group: String) throws(Unavailable) {
        self.group = group
        var definitions: [String] = []
        var counts: [String: Int] = [:]
        for site in sites {
            guard let names = Self.argumentNames[site.name] else { continue }
            let index = counts[site.name, default: 0]
            counts[site.name] = index + 1
            let event = index == 0 ? site.name : "\(site.name)_\(index)"
            var line = "p:\(group)/\(event) \(executable):0x\(String(site.offset, radix: 16))"
            if let semaphore = site.semaphoreOffset { line += "(0x\(String(semaphore, radix: 16)))" }
            for (name, operand) in zip(names, site.operands) {
                guard let register = Self.register(operand) else { continue }
                let parts = name.split(separator: ":")
                line += parts.count == 2 ? " \(parts[0])=+0(\(register)):string" : " \(name)=\(register):u64"
            }
            definitions.append(line)
            probeOfEvent[event] = site.name
        }
        do throws(Unavailable) {
            for line in definitions { try Self.append(line) }
        } catch {
            remove()
            throw error
        }
    }

    /// Removes every event of the group (errors ignored: the events may be gone already).
    package func remove() {
        for event in probeOfEvent.keys.sorted() { try? Self.append("-:\(group)/\(event)") }
    }

    /// A note's register operand as a uprobe fetch argument: `%rax` → `%ax`, `%r8` → `%r8`,
    /// `x0` → `%x0`; nil for memory and constant operands (Perf's probes use registers only).
    package static func register(_ operand: String) -> String? {
        #if arch(x86_64)
            let legacy = ["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp"]
            guard operand.hasPrefix("%") else { return nil }
            let name = String(operand.dropFirst())
            if legacy.contains(name) { return "%" + name.dropFirst() }
            return name.hasPrefix("r") && name.dropFirst().allSatisfy(\.isNumber) ? operand : nil
        #else
            return operand.hasPrefix("x") && operand.dropFirst().allSatisfy(\.isNumber) ? "%" + operand : nil
        #endif
    }

    static func append(_ line: String) throws(Unavailable) {
        let path = tracefs + "/uprobe_events"
        let fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard fd >= 0 else {
            throw Unavailable("cannot open \(path): \(String(cString: strerror(errno))) (uprobes need root)")
        }
        defer { close(fd) }
        let bytes = Array((line + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else {
            let reason = String(cString: strerror(errno))
            throw Unavailable("the kernel refused uprobe '\(line)': \(reason) (is CONFIG_UPROBE_EVENTS enabled?)")
        }
    }

    /// Makes sure tracefs is mounted with uprobe events: mounts it when it is not and this process
    /// may (root).
    package static func requireTracefs() throws(Unavailable) {
        let events = tracefs + "/uprobe_events"
        if access(events, F_OK) == 0 { return }
        if access(tracefs + "/README", F_OK) != 0 {
            guard geteuid() == 0 else {
                throw Unavailable("tracefs is not mounted at \(tracefs) (mount -t tracefs nodev \(tracefs), as root)")
            }
            if mount("nodev", tracefs, "tracefs", 0, nil) != 0 {
                throw Unavailable(
                    "tracefs is not mounted at \(tracefs) and mounting it failed: \(String(cString: strerror(errno)))")
            }
        }
        guard access(events, F_OK) == 0 else {
            throw Unavailable("\(events) is missing: this kernel has no uprobe events (CONFIG_UPROBE_EVENTS)")
        }
    }

    /// The `perf` executable on `PATH` (Debian: package linux-perf).
    package static func findPerf(environment: [String: String]) throws(Unavailable) -> String {
        let path = environment["PATH"] ?? ""
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/perf"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        throw Unavailable("perf is not installed (not on PATH=\(path)); on Debian: apt-get install linux-perf")
    }
}
