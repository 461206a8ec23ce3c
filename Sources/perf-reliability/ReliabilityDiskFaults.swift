// Disk faults under a running writer (`perf-test-child reliability writer`): a file-size limit, a tiny
// filesystem, the data directory deleted, and the data directory made read-only. Each must cost
// dropped lines reported as a `dropped` gap, never the process; recording resumes once the fault
// is lifted.
import Foundation
import Glibc
import Perf
import PerfTestSupport

enum ReliabilityDiskFaults {
    /// A writer child driven through a fault: start, `ack` count before, fault, count during,
    /// lift, count after, then stdin EOF for a clean shutdown. Writers pause 1 ms per line so
    /// the acks read stay close to what the child is doing: otherwise the pipe's backlog would
    /// let "after the lift" end before the child saw the lift.
    private struct Episode {
        var before = 200
        var during = 400
        var after = 200
    }

    /// What the writer's ledger says about the fault.
    private struct Outcome {
        var status: Int32
        var lines: Int
        var droppedReported: Int
        var linesAfterGap: Int
        var malformed: Int
        /// Ends made after the fault was lifted.
        var endsAfterLift: Int

        var survived: Bool { ChildProcess.exitedNormally(status) && ChildProcess.exitCode(status) == 0 }
        /// At most one malformed line: the write that met the fault may land in part (a short
        /// write), and the reopened writer ends that fragment so it reads as one malformed line.
        /// Resuming means most ends after the lift reach the file (the first may still meet the fault).
        var pass: Bool {
            survived && droppedReported > 0 && linesAfterGap >= endsAfterLift / 2 && malformed <= 1
        }

        var summary: String {
            "\(ChildProcess.describe(status)); \(droppedReported) lines reported dropped; \(linesAfterGap) lines "
                + "written after the gap; \(malformed) partial line read as malformed"
        }

        var counts: [String: Double] {
            [
                "lines": Double(lines), "dropped": Double(droppedReported), "afterGap": Double(linesAfterGap),
                "malformed": Double(malformed),
            ]
        }
    }

    private static func drive(
        data: URL, options: [String], asNobody: Bool = false, episode: Episode = Episode(),
        fault: (pid_t) throws -> Void, lift: (pid_t) throws -> Void
    ) throws -> Outcome {
        let writer = ["reliability", "writer", data.path] + options
        let child =
            asNobody
            ? try ChildProcess(
                executable: "setpriv",
                arguments: ["--reuid=65534", "--regid=65534", "--clear-groups", testChild] + writer,
                withStandardInput: true)
            : try ChildProcess(executable: testChild, arguments: writer, withStandardInput: true)
        var acked = 0
        func waitForAcks(_ more: Int) throws {
            acked += more
            guard child.readLines(until: { $0 == "ack \(acked - 1)" }, timeoutSeconds: 60) != nil else {
                // Say how it stopped: an exit status or signal, or still running after 60 s.
                let ended = child.reachedEndOfFile
                if !ended { child.killAndWait() }
                let how = ended ? ChildProcess.describe(child.wait()) : "no ack for 60 s, killed"
                throw ChildProcess.Failure(description: "the writer stopped before \(acked) acks (\(how))")
            }
        }
        try waitForAcks(episode.before)
        try fault(child.pid)
        try waitForAcks(episode.during)
        try lift(child.pid)
        try waitForAcks(episode.after)
        child.closeStandardInput()
        _ = child.readRemainingLines()
        let status = child.wait()
        let (events, summary) = try LedgerReader(directory: data).readAll()
        let firstGap = events.firstIndex { $0.kind == .dropped } ?? events.endIndex
        return Outcome(
            status: status, lines: events.count,
            droppedReported: events.filter { $0.kind == .dropped }.reduce(0) { $0 + ($1.count ?? 0) },
            linesAfterGap: events[firstGap...].filter { $0.kind == .span }.count,
            malformed: summary.malformedLines, endsAfterLift: episode.after)
    }

    /// `RLIMIT_FSIZE` (what `ulimit -f` sets) below the ledger cap; lifted with `prlimit --pid`
    /// from outside, as an operator would.
    static func fileSizeLimit() throws -> ScenarioResult {
        let scratch = try ScratchDirectory("fsize")
        defer { scratch.remove() }
        let limit = 64 * 1024
        let outcome = try drive(
            data: scratch.url, options: ["fsize=\(limit)", "cap=\(1 << 20)", "pauseMs=1"],
            fault: { _ in }, lift: { pid in try raiseFileSizeLimit(of: pid) })
        return ScenarioResult(
            scenario: "Disk: file size limit",
            done: "writer under RLIMIT_FSIZE = 64 KiB (ledger cap 1 MiB): 200 + 400 ends past the limit, "
                + "limit lifted with `prlimit --pid`, 200 more",
            target: "no crash (EFBIG/SIGXFSZ handled), gap reported as `dropped`, recording resumes",
            result: outcome.summary, pass: outcome.pass,
            notes: "without `FileSizeSignal` (Perf.install ignores an unhandled SIGXFSZ) the writer died of "
                + "SIGXFSZ at its first line past the limit; the partial line is the write that met the limit",
            counts: outcome.counts)
    }

    private static func raiseFileSizeLimit(of pid: pid_t) throws {
        guard ChildProcess.runTool(["prlimit", "--pid", "\(pid)", "--fsize=unlimited"]) else {
            throw ChildProcess.Failure(description: "prlimit --pid \(pid) --fsize=unlimited failed")
        }
    }

    /// A 256 KiB tmpfs mostly taken by a filler file; the filler is deleted to make room.
    static func tinyFilesystem() throws -> ScenarioResult {
        let scratch = try ScratchDirectory("tmpfs")
        defer { scratch.remove() }
        let name = "Disk: tiny filesystem (ENOSPC)"
        let target = "no crash, gap reported as `dropped`, recording resumes when space returns"
        guard ChildProcess.runTool(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", scratch.path]) else {
            return .skipped(
                scenario: name, target: target, why: "mount -t tmpfs -o size=256k refused (no privilege here)",
                notes: "ENOSPC is covered by the ledger's fault-injection seam (LedgerFaultInjectionTests, "
                    + "JournalKit FaultInjectionTests)")
        }
        defer { _ = ChildProcess.runTool(["umount", "-l", scratch.path]) }
        let filler = scratch.url.appendingPathComponent("filler")
        try Data(count: 160 * 1024).write(to: filler)
        let outcome = try drive(
            data: scratch.url.appendingPathComponent("data"), options: ["cap=\(1 << 20)", "pauseMs=1"],
            episode: Episode(before: 50, during: 600, after: 200),
            fault: { _ in }, lift: { _ in try FileManager.default.removeItem(at: filler) })
        return ScenarioResult(
            scenario: name,
            done: "writer on a 256 KiB tmpfs with a 160 KiB filler: 50 + 600 ends (the disk fills), filler "
                + "deleted, 200 more",
            target: target, result: outcome.summary, pass: outcome.pass, counts: outcome.counts)
    }

    /// `rm -rf` of the data directory under a running writer.
    static func directoryDeleted() throws -> ScenarioResult {
        let scratch = try ScratchDirectory("deleted")
        defer { scratch.remove() }
        let data = scratch.url.appendingPathComponent("data")
        let outcome = try drive(
            data: data, options: ["pauseMs=1"],
            fault: { _ in try FileManager.default.removeItem(at: data) }, lift: { _ in })
        return ScenarioResult(
            scenario: "Disk: data directory deleted",
            done: "data directory removed (`rm -rf`) after 200 ends; 600 more ends",
            target: "no crash, gap reported as `dropped`, recording resumes",
            result: outcome.summary, pass: outcome.pass,
            notes: "the writer notices the unlinked file within 64 lines and recreates the directory 0700; "
                + "lines since the last check are counted as dropped",
            counts: outcome.counts)
    }

    /// The directory and ledger made read-only (0500/0400) under a writer that is not root
    /// (root ignores modes): as root, the writer runs as `nobody`.
    static func readOnly() throws -> ScenarioResult {
        let scratch = try ScratchDirectory("readonly")
        defer { scratch.remove() }
        let name = "Disk: data directory made read-only (modes)"
        let target = "no crash, gap reported as `dropped`, recording resumes when writable again"
        let asNobody = geteuid() == 0
        if asNobody,
            !ChildProcess.runTool(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "true"])
        {
            return .skipped(
                scenario: name, target: target, why: "setpriv cannot drop to nobody here",
                notes: "a root writer ignores file modes")
        }
        chmod(scratch.path, 0o777)
        let data = scratch.url.appendingPathComponent("data")
        let ledger = data.appendingPathComponent(LedgerWriter.fileName).path
        let outcome = try drive(
            data: data, options: ["cap=16384", "pauseMs=1"], asNobody: asNobody,
            episode: Episode(before: 200, during: 400, after: 30),
            fault: { _ in
                chmod(ledger, 0o400)
                chmod(data.path, 0o500)
            },
            lift: { _ in
                chmod(data.path, 0o700)
                chmod(ledger, 0o600)
            })
        return ScenarioResult(
            scenario: name,
            done:
                "writer as \(asNobody ? "nobody" : "this user"), ledger cap 16 KiB: 200 ends, then directory 0500 "
                + "and ledger 0400 for 400 "
                + "ends (rotation and reopen fail with EACCES), modes restored, 30 more (the 16 KiB cap keeps ~70)",
            target: target, result: outcome.summary, pass: outcome.pass,
            notes: "lines keep landing through the open descriptor until the cap forces a rotation, then "
                + "past it up to twice the cap while rotation fails (both files kept)",
            counts: outcome.counts)
    }

    /// The data directory bind-mounted over itself read-only: new opens and renames fail with
    /// EROFS. (Remounting the filesystem itself read-only is refused while a writer holds a file
    /// open, so this is how a directory goes read-only under a running service.)
    static func readOnlyMount() throws -> ScenarioResult {
        let scratch = try ScratchDirectory("remount")
        defer { scratch.remove() }
        let name = "Disk: data directory made read-only (bind mount, EROFS)"
        let target = "no crash, gap reported as `dropped`, recording resumes when writable again"
        let data = scratch.url.appendingPathComponent("data")
        guard ChildProcess.runTool(["mount", "--bind", "-o", "ro", scratch.path, scratch.path]),
            ChildProcess.runTool(["umount", scratch.path])
        else {
            return .skipped(
                scenario: name, target: target, why: "mount --bind refused (no privilege here)",
                notes: "the modes variant covers a read-only directory; \(ChildProcess.lastToolOutput)")
        }
        var mounted = false
        defer { if mounted { _ = ChildProcess.runTool(["umount", "-l", data.path]) } }
        let outcome = try drive(
            data: data, options: ["cap=16384", "pauseMs=1"],
            episode: Episode(before: 200, during: 400, after: 30),
            fault: { _ in
                // A file the writer opens through the new mount before it turns read-only makes
                // the read-only step fail (EBUSY): one mount(8) call keeps that window tiny, and a
                // lost race is undone and retried.
                for _ in 0..<5 where !mounted {
                    mounted = ChildProcess.runTool(["mount", "--bind", "-o", "ro", data.path, data.path])
                    if !mounted { _ = ChildProcess.runTool(["umount", data.path]) }
                }
                guard mounted else {
                    throw ChildProcess.Failure(description: "read-only bind mount: \(ChildProcess.lastToolOutput)")
                }
            },
            lift: { _ in
                mounted = !ChildProcess.runTool(["umount", data.path])
            })
        return ScenarioResult(
            scenario: name,
            done: "ledger cap 16 KiB: 200 ends, then the directory bind-mounted read-only over itself for 400 "
                + "ends (rotation and reopen fail with EROFS), unmounted, 30 more",
            target: target, result: outcome.summary, pass: outcome.pass,
            notes: "the descriptor opened before the mount keeps writing until the cap forces a rotation, then "
                + "past it up to twice the cap while rotation fails (both files kept)",
            counts: outcome.counts)
    }
}
