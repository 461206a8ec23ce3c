// Syscall faults injected into a real writer (`perf-test-child reliability writer`) from outside:
// strace's `-e inject=` (EIO and ENOSPC writes, EXDEV renames, EMFILE opens), restricted with `-P`
// to the ledger file, and an LD_PRELOAD shim that makes one ledger write really short. Each run
// checks the ledger line by line against what the writer ended: lines kept, the gap reported
// with its exact size, no line deleted that was on disk, one message on stderr, a normal exit.
import Foundation
import Glibc
import Perf
import PerfTestSupport

enum ReliabilityFaultInjection {
    /// A writer run to its end under a fault.
    struct Run {
        var status: Int32
        /// `count` of every span line, `.prev` first.
        var spans: [Int]
        /// `count` of every `dropped` line.
        var dropped: [Int]
        /// Sequences in `.prev` alone.
        var previous: [Int]
        var malformed: Int
        /// Lines that are not one whole JSON object each.
        var invalid: Int
        /// The writer's `perf:` lines on stderr.
        var messages: [String]
        var sessionStatus: String

        var exitedCleanly: Bool { ChildProcess.exitedNormally(status) && ChildProcess.exitCode(status) == 0 }

        /// Sequences below `lines` with no span line in either file.
        func missing(_ lines: Int) -> [Int] {
            let kept = Set(spans)
            return (0..<lines).filter { !kept.contains($0) }
        }

        var summary: String {
            "\(ChildProcess.describe(status)); \(spans.count) span lines, dropped lines \(dropped), "
                + "\(malformed) malformed, \(invalid) not JSON; \(messages.count) stderr message(s); session "
                + "\(sessionStatus)"
        }
    }

    /// Runs the writer for `lines` ends under `wrapper` (strace or an environment) and reads the result.
    static func run(
        lines: Int, cap: Int, wrapper: (_ data: URL, _ child: [String]) -> (String, [String]),
        environment: [String: String]? = nil
    ) throws -> Run {
        let scratch = try ScratchDirectory("faults")
        defer { scratch.remove() }
        let data = scratch.url.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let stderrPath = scratch.url.appendingPathComponent("stderr").path
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        let child = [testChild, "reliability", "writer", data.path, "lines=\(lines)", "cap=\(cap)", "acks=0"]
        let (executable, arguments) = wrapper(data, child)
        let process = try ChildProcess(
            executable: executable, arguments: arguments, standardErrorPath: stderrPath, environment: environment)
        _ = process.readRemainingLines()
        let status = process.wait()
        var spans: [Int] = []
        var previous: [Int] = []
        var dropped: [Int] = []
        var invalid = 0
        for name in [LedgerWriter.previousFileName, LedgerWriter.fileName] {
            let bytes = (try? Data(contentsOf: data.appendingPathComponent(name))) ?? Data()
            for line in bytes.split(separator: UInt8(ascii: "\n")) {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
                    invalid += 1
                    continue
                }
                let count = object["count"] as? Int ?? -1
                switch object["kind"] as? String {
                case "span":
                    spans.append(count)
                    if name == LedgerWriter.previousFileName { previous.append(count) }
                case "dropped": dropped.append(count)
                default: break
                }
            }
        }
        let (_, summary) = try LedgerReader(directory: data).readAll()
        let messages = ((try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "")
            .split(separator: "\n").map(String.init).filter { $0.hasPrefix("perf:") }
        return Run(
            status: status, spans: spans, dropped: dropped, previous: previous, malformed: summary.malformedLines,
            invalid: invalid, messages: messages, sessionStatus: sessionStatus(data))
    }

    /// The writer's session as the report tells it (`active`, `terminated`, `crashed`).
    static func sessionStatus(_ data: URL) -> String {
        guard let bytes = try? ReportBuilder(directory: data).build(),
            let report = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
            let sessions = report["sessions"] as? [[String: Any]], sessions.count == 1
        else { return "unknown" }
        return sessions[0]["status"] as? String ?? "unknown"
    }

    /// `strace` around the child, injecting `fault` only into syscalls on the ledger file.
    static func strace(_ fault: String) -> (URL, [String]) -> (String, [String]) {
        { data, child in
            let ledger = data.appendingPathComponent(LedgerWriter.fileName).path
            return ("strace", ["-f", "-qq", "-o", "/dev/null", "-P", ledger, "-e", "inject=\(fault)"] + child)
        }
    }

    /// Why strace cannot inject here, or nil when it can (it needs ptrace).
    static func straceUnavailable() -> String? {
        guard ChildProcess.runTool(["strace", "-f", "-qq", "-o", "/dev/null", "-e", "inject=getppid:retval=0", "true"])
        else {
            return
                "strace cannot run here (\(ChildProcess.lastToolOutput.isEmpty ? "not installed" : ChildProcess.lastToolOutput))"
        }
        return nil
    }

    static let straceTarget =
        "every line whole and valid JSON, lines kept, each gap reported with its exact size, no line deleted that "
        + "was on disk, one message on stderr, normal exit"
}
