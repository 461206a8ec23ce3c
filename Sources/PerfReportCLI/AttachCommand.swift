// `perf-report attach`: records the USDT probes of a running process with the system's `perf`
// (uprobes; the target is not changed, restarted or signalled) and writes a Chrome trace plus a
// summary per span name.
import Foundation
import Glibc
import Perf
import PerfReport

enum AttachCommand {
    static let spec = CommandSpec(
        name: "attach", overview: "Record the probes of a running process into a Chrome trace.",
        options: [
            .value("pid", valueName: "pid", required: true, help: "The process to record (a program that links Perf)."),
            .value("seconds", valueName: "seconds", help: "How long to record (default: 5)."),
            .value("output", short: "o", valueName: "file", help: "Where to write the trace (default: ./trace.json)."),
        ],
        exitCodes: [
            (.success, ExitCode.success.meaning), (.usage, ExitCode.usage.meaning),
            (
                .invalidInput,
                "no such process, no Perf probes in its executable, or perf, tracefs or uprobes cannot be had "
                    + "(the message says which)"
            ),
        ])

    static func run(
        _ parsed: CommandSpec.Parsed, environment: [String: String], progress: (String) -> Void
    ) -> CommandResult {
        let pidText = parsed.value("pid") ?? ""
        guard let pid = Int32(pidText), pid > 0 else {
            return PerfReportCommand.usageError(.badValue("--pid", value: pidText, expected: "a process id"), spec)
        }
        var seconds = 5.0
        if let text = parsed.value("seconds") {
            guard let value = Double(text), value > 0, value <= 86_400 else {
                return PerfReportCommand.usageError(
                    .badValue("--seconds", value: text, expected: "a positive number of seconds"), spec)
            }
            seconds = value
        }
        let output = parsed.value("output") ?? "trace.json"
        let attach: ProbeAttach
        do {
            attach = try ProbeAttach(pid: pid, environment: environment)
        } catch {
            return CommandResult(stderr: "perf-report: \(error)\n", status: .invalidInput)
        }
        progress(
            "perf-report: recording \(attach.sites.count) probe sites of pid \(pid) (\(attach.executable)) for \(seconds) s"
        )
        let hits: [ProbeHit]
        do {
            hits = try attach.record(seconds: seconds)
        } catch {
            return CommandResult(stderr: "perf-report: \(error)\n", status: .invalidInput)
        }
        let trace = ProbeTrace.render(hits, pid: pid, executable: attach.executable, seconds: seconds)
        do {
            try ExportFile.write(trace, to: URL(fileURLWithPath: output))
        } catch {
            return PerfReportCommand.invalidInput(error)
        }
        return CommandResult(stdout: summary(hits, pid: pid, seconds: seconds, output: output))
    }

    /// The summary: hits per probe, then per span name count, p50, p95, max and over budget.
    static func summary(_ hits: [ProbeHit], pid: Int32, seconds: Double, output: String) -> String {
        var perProbe: [String: Int] = [:]
        for hit in hits { perProbe[hit.probe, default: 0] += 1 }
        var text = "pid \(pid), \(seconds) s: \(hits.count) probe hits"
        if !perProbe.isEmpty {
            text += " (" + perProbe.keys.sorted().map { "\($0) \(perProbe[$0]!)" }.joined(separator: ", ") + ")"
        }
        text += "\ntrace: \(output)\n"
        let spans = ProbeSpanSummary.summaries(hits)
        guard !spans.isEmpty else { return text + "no span ended while recording\n" }
        let width = max(4, spans.map(\.name.count).max() ?? 4)
        func ms(_ nanos: Int64) -> String { String(format: "%10.3f", Double(nanos) / 1e6) }
        text +=
            "span".padding(toLength: width, withPad: " ", startingAt: 0)
            + "      count     p50 ms     p95 ms     max ms  over budget\n"
        for span in spans {
            text +=
                span.name.padding(toLength: width, withPad: " ", startingAt: 0)
                + String(format: " %10d", span.count) + " " + ms(span.p50Nanos) + " " + ms(span.p95Nanos) + " "
                + ms(span.maxNanos) + String(format: " %12d", span.overBudget) + "\n"
        }
        for hit in hits where hit.probe == "hang" || hit.probe == "hitch" {
            text +=
                "\(hit.probe) \(hit.arguments["target"] ?? "?"): \(hit.number("lower_ms"))–\(hit.number("upper_ms")) ms"
            text += ", culprit \(hit.arguments["culprit"].flatMap { $0.isEmpty ? nil : $0 } ?? "unknown")\n"
        }
        return text
    }
}

/// One attach to a live process: its executable's probe sites, then `perf record` of their
/// uprobes for a while.
package struct ProbeAttach: Sendable {
    package let pid: Int32
    /// The target's executable as the uprobes name it.
    package let executable: String
    package let sites: [ProbeSite]
    let perf: String

    package init(pid: Int32, environment: [String: String]) throws {
        guard kill(pid, 0) == 0 || errno == EPERM else { throw ProbeEvents.Unavailable("no process \(pid)") }
        let link = "/proc/\(pid)/exe"
        guard let data = FileManager.default.contents(atPath: link) else {
            throw ProbeEvents.Unavailable("cannot read \(link) (the executable of pid \(pid); root may be needed)")
        }
        let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: link)) ?? link
        // A replaced or deleted executable is still reachable through /proc: uprobes go on its inode.
        executable = target.hasSuffix(" (deleted)") || access(target, R_OK) != 0 ? link : target
        self.pid = pid
        sites = try ProbeNotes.sites(in: [UInt8](data), path: executable)
        perf = try ProbeEvents.findPerf(environment: environment)
        try ProbeEvents.requireTracefs()
    }

    /// Defines the uprobes, runs `perf record -p` for `seconds`, removes the uprobes and returns
    /// the hits.
    package func record(seconds: Double) throws -> [ProbeHit] {
        let events = try ProbeEvents(sites: sites, executable: executable, group: "perf_attach_\(pid)")
        defer { events.remove() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("perf-attach-\(getpid())-\(pid)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = directory.appendingPathComponent("perf.data").path
        try Self.run(
            perf,
            ["record", "-q", "-o", data, "-e", "\(events.group):*", "-p", String(pid), "--", "sleep", String(seconds)],
            what: "perf record")
        let text = try Self.run(
            perf, ["script", "-i", data, "-F", "pid,tid,time,event,trace", "--ns"], what: "perf script")
        return ProbeScript.hits(text, group: events.group, probeOfEvent: events.probeOfEvent)
    }

    /// Runs a tool to its end: its standard output, or its exit status and standard error as the
    /// error. The tool starts with no signal blocked and default handlers: a caller's blocked
    /// SIGCHLD (any thread of a Swift program may block it) left `perf record` waiting forever for
    /// its workload.
    @discardableResult
    package static func run(_ tool: String, _ arguments: [String], what: String) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("perf-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let outPath = directory.appendingPathComponent("stdout").path
        let errPath = directory.appendingPathComponent("stderr").path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGCHLD, SIGINT, SIGTERM, SIGPIPE, SIGPROF] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([tool] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, tool, &actions, &attributes, argv, environ)
        guard spawned == 0 else {
            throw ProbeEvents.Unavailable("cannot run \(tool): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        let output = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        guard status == 0 else {
            let message = ((try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let how = status & 0x7F == 0 ? "exit \((status >> 8) & 0xFF)" : "signal \(status & 0x7F)"
            throw ProbeEvents.Unavailable("\(what) failed (\(how)): \(message)")
        }
        return output
    }
}
