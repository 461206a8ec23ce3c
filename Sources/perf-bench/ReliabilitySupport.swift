// What every reliability scenario shares: its one-line JSON result, child processes driven over
// pipes, scratch directories and process figures.
import Foundation
import Glibc

/// The one machine-readable line a scenario prints: `scripts/reliability.sh` collects these and
/// `perf-bench reliability report` turns them into `Reports/RELIABILITY.md`.
struct ScenarioResult: Codable {
    var scenario: String
    /// What was done, with its counts, in words.
    var done: String
    /// The target from the issue.
    var target: String
    /// What was measured against the target.
    var result: String
    var pass: Bool
    var notes: String = ""
    var seconds: Double = 0
    /// The raw counts behind `done` and `result`, for machines.
    var counts: [String: Double] = [:]

    /// Prints the result as one JSON line on stdout (the scenario's only stdout line).
    func emit() {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(self)) ?? Data("{\"scenario\":\"\(scenario)\",\"pass\":false}".utf8)
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }
}

/// Progress for the operator, on stderr so stdout stays one line per scenario.
func progress(_ message: String) {
    FileHandle.standardError.write(Data("reliability: \(message)\n".utf8))
}

/// Seconds on CLOCK_MONOTONIC.
func monotonicSeconds() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

/// This executable, for spawning children of itself.
let perfBenchExecutable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path

/// A fresh empty directory under the temporary directory; `remove()` deletes it.
struct ScratchDirectory {
    let url: URL
    var path: String { url.path }

    init(_ label: String) throws {
        url = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("perf-reliability-\(label)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// A child process whose stdout (and optionally stdin) is a pipe, read line by line.
///
/// Lines are read with a deadline (poll(2)), so a child that falls silent fails the scenario
/// instead of hanging it.
final class ChildProcess {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let pid: pid_t
    private let stdoutFD: Int32
    private var stdinFD: Int32?
    private var pending: [UInt8] = []
    private var reachedEOF = false
    private var status: Int32?

    /// Spawns `executable` with `arguments`; stderr is inherited unless `quiet` (discarded) or
    /// `mergeStandardError` (read with stdout). A bare command name (no `/`) is looked up in `PATH`.
    init(
        executable: String, arguments: [String], withStandardInput: Bool = false, quiet: Bool = false,
        mergeStandardError: Bool = false
    ) throws {
        var output: [Int32] = [0, 0]
        var input: [Int32] = [-1, -1]
        guard pipe(&output) == 0 else { throw Failure(description: "pipe failed: errno \(errno)") }
        if withStandardInput, pipe(&input) != 0 { throw Failure(description: "pipe failed: errno \(errno)") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_addclose(&actions, output[0])
        if withStandardInput {
            posix_spawn_file_actions_adddup2(&actions, input[0], 0)
            posix_spawn_file_actions_addclose(&actions, input[1])
        }
        if quiet { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }
        if mergeStandardError { posix_spawn_file_actions_adddup2(&actions, output[1], 2) }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let spawned =
            executable.contains("/")
            ? posix_spawn(&child, executable, &actions, nil, argv, environ)
            : posix_spawnp(&child, executable, &actions, nil, argv, environ)
        close(output[1])
        if withStandardInput { close(input[0]) }
        guard spawned == 0 else {
            close(output[0])
            if withStandardInput { close(input[1]) }
            throw Failure(description: "cannot spawn \(executable): \(String(cString: strerror(spawned)))")
        }
        pid = child
        stdoutFD = output[0]
        stdinFD = withStandardInput ? input[1] : nil
    }

    deinit {
        close(stdoutFD)
        if let stdinFD { close(stdinFD) }
        if status == nil {
            kill(pid, SIGKILL)
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        }
    }

    /// The next complete line, or nil at end of file or when `timeoutSeconds` pass first.
    func readLine(timeoutSeconds: Double) -> String? {
        let deadline = monotonicSeconds() + timeoutSeconds
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            guard !reachedEOF else { return nil }
            let remainingMs = Int32(max(0, (deadline - monotonicSeconds()) * 1000))
            var descriptor = pollfd(fd: stdoutFD, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, remainingMs)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return nil }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { read(stdoutFD, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 {
                reachedEOF = true
            } else {
                pending += chunk[..<count]
            }
        }
    }

    /// Reads until `line` matches, returning every line read (the match last), or nil on timeout
    /// or end of file.
    func readLines(until match: (String) -> Bool, timeoutSeconds: Double) -> [String]? {
        let deadline = monotonicSeconds() + timeoutSeconds
        var lines: [String] = []
        while let line = readLine(timeoutSeconds: max(0, deadline - monotonicSeconds())) {
            lines.append(line)
            if match(line) { return lines }
        }
        return nil
    }

    /// Every line left, up to end of file (call after the child exited or was killed).
    func readRemainingLines() -> [String] {
        var lines: [String] = []
        while let line = readLine(timeoutSeconds: 30) { lines.append(line) }
        return lines
    }

    func send(_ signal: Int32) { kill(pid, signal) }

    /// Closes the child's stdin: children that watch it take that as "finish and exit".
    func closeStandardInput() {
        if let stdinFD { close(stdinFD) }
        stdinFD = nil
    }

    /// Waits for the child to exit and returns its raw wait status.
    @discardableResult
    func wait() -> Int32 {
        if let status { return status }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        status = raw
        return raw
    }

    /// SIGKILLs the child and reaps it.
    func killAndWait() {
        send(SIGKILL)
        wait()
    }

    /// "exit 0", "signal 25 (SIGXFSZ)": what a raw wait status means.
    static func describe(_ status: Int32) -> String {
        let signal = status & 0x7F
        if signal == 0 { return "exit \((status >> 8) & 0xFF)" }
        return "signal \(signal) (\(String(cString: strsignal(signal))))"
    }

    static func exitedNormally(_ status: Int32) -> Bool { status & 0x7F == 0 }

    /// The output of the last tool that failed, for error messages.
    nonisolated(unsafe) static var lastToolOutput = ""

    /// Runs a tool to completion; true when it exited 0 (otherwise its output is kept in
    /// ``lastToolOutput``).
    static func runTool(_ arguments: [String]) -> Bool {
        guard
            let tool = try? ChildProcess(
                executable: arguments[0], arguments: Array(arguments.dropFirst()), mergeStandardError: true)
        else { return false }
        let output = tool.readRemainingLines()
        let status = tool.wait()
        let succeeded = exitedNormally(status) && exitCode(status) == 0
        if !succeeded { lastToolOutput = "\(arguments.joined(separator: " ")): \(output.joined(separator: " "))" }
        return succeeded
    }

    static func exitCode(_ status: Int32) -> Int32 { (status >> 8) & 0xFF }
}
