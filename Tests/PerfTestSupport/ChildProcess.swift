// Child processes driven over pipes, for tests, the reliability scenarios and the soak loops:
// spawned with posix_spawn, read line by line with deadlines so a silent child fails the caller
// instead of hanging it.
import Foundation
import Glibc

/// Seconds on CLOCK_MONOTONIC.
public func monotonicSeconds() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

/// Executables built beside the running one: the test bundle, `perf-reliability` and
/// `perf-test-child` all land in the same build products directory.
public enum BuildProducts {
    /// The directory of the running executable (`.build/<configuration>/`).
    public static let directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        .deletingLastPathComponent()

    /// `name` in that directory, e.g. `perf-test-child`.
    public static func executable(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// The crash and kill children (`perf-test-child <kind> …`). A test target that launches it
    /// lists `.target(name: "perf-test-child")` among its dependencies, so SwiftPM builds it.
    public static var testChild: String { executable("perf-test-child") }
}

/// A child process whose stdout (and optionally stdin) is a pipe, read line by line.
///
/// Lines are read with a deadline (poll(2)), so a child that falls silent fails the scenario
/// instead of hanging it.
public final class ChildProcess {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String

        public init(description: String) { self.description = description }
    }

    public let pid: pid_t
    private let stdoutFD: Int32
    private var stdinFD: Int32?
    private var pending: [UInt8] = []
    private var reachedEOF = false

    /// Whether the child closed its stdout (normally: it exited).
    public var reachedEndOfFile: Bool { reachedEOF }
    private var status: Int32?

    /// Spawns `executable` with `arguments`; stderr is inherited unless `quiet` (discarded),
    /// `mergeStandardError` (read with stdout) or `standardErrorPath` (opened for appending). A
    /// bare command name (no `/`) is looked up in `PATH`. `environment` is the child's whole
    /// environment; `nil` passes this process's on.
    public init(
        executable: String, arguments: [String], withStandardInput: Bool = false, quiet: Bool = false,
        mergeStandardError: Bool = false, standardErrorPath: String? = nil, environment: [String: String]? = nil
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
        if let standardErrorPath {
            posix_spawn_file_actions_addopen(&actions, 2, standardErrorPath, O_WRONLY | O_APPEND, 0)
        }
        // A child starts with no signal blocked, as a program started from a shell does. Without
        // this it inherits the spawning thread's mask, and the test runner's Dispatch workers
        // block most signals (SIGUSR1, SIGTERM, …): a child's handler for them never ran, and a
        // test that signalled its child waited for nothing.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let variables = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { variables?.forEach { free($0) } }
        var child: pid_t = 0
        func spawn(_ envp: UnsafePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
            executable.contains("/")
                ? posix_spawn(&child, executable, &actions, &attributes, argv, envp)
                : posix_spawnp(&child, executable, &actions, &attributes, argv, envp)
        }
        let spawned = variables.map { $0.withUnsafeBufferPointer { spawn($0.baseAddress!) } } ?? spawn(environ)
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
    public func readLine(timeoutSeconds: Double) -> String? {
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
    public func readLines(until match: (String) -> Bool, timeoutSeconds: Double) -> [String]? {
        let deadline = monotonicSeconds() + timeoutSeconds
        var lines: [String] = []
        while let line = readLine(timeoutSeconds: max(0, deadline - monotonicSeconds())) {
            lines.append(line)
            if match(line) { return lines }
        }
        return nil
    }

    /// Every line left, up to end of file (call after the child exited or was killed).
    public func readRemainingLines() -> [String] {
        var lines: [String] = []
        while let line = readLine(timeoutSeconds: 30) { lines.append(line) }
        return lines
    }

    public func send(_ signal: Int32) { kill(pid, signal) }

    /// Closes the child's stdin: children that watch it take that as "finish and exit".
    public func closeStandardInput() {
        if let stdinFD { close(stdinFD) }
        stdinFD = nil
    }

    /// Waits for the child to exit and returns its raw wait status.
    @discardableResult
    public func wait() -> Int32 {
        if let status { return status }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        status = raw
        return raw
    }

    /// SIGKILLs the child and reaps it.
    public func killAndWait() {
        send(SIGKILL)
        wait()
    }

    /// "exit 0", "signal 25 (SIGXFSZ)": what a raw wait status means.
    public static func describe(_ status: Int32) -> String {
        let signal = status & 0x7F
        if signal == 0 { return "exit \((status >> 8) & 0xFF)" }
        return "signal \(signal) (\(String(cString: strsignal(signal))))"
    }

    public static func exitedNormally(_ status: Int32) -> Bool { status & 0x7F == 0 }
}

extension ChildProcess {
    /// The exit code of a normal exit.
    public static func exitCode(_ status: Int32) -> Int32 { (status >> 8) & 0xFF }

    /// The signal that ended the child, or nil when it exited.
    public static func terminatingSignal(_ status: Int32) -> Int32? { exitedNormally(status) ? nil : status & 0x7F }

    /// Runs `executable` to its end and returns its stdout lines and raw wait status; `timeoutSeconds`
    /// bounds each silence, after which the child is killed.
    public static func run(
        _ executable: String, _ arguments: [String], timeoutSeconds: Double = 60, standardErrorPath: String? = nil
    ) throws -> (lines: [String], status: Int32) {
        let child = try ChildProcess(
            executable: executable, arguments: arguments, standardErrorPath: standardErrorPath)
        var lines: [String] = []
        while let line = child.readLine(timeoutSeconds: timeoutSeconds) { lines.append(line) }
        if !child.reachedEndOfFile { child.send(SIGKILL) }
        return (lines, child.wait())
    }
}
