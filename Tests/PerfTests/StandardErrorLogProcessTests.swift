// The stderr log in real processes (`perf-test-child hang-log`): a hang on a watched queue gives
// exactly one line with its duration, queue and culprit; without the option stderr stays empty;
// a queue label with a URL is filtered; a child SIGKILLed mid-hang is told by the next start; a
// hang in a function an optimised build merged with its twin names it, marked merged; one in a
// function inlined into a thunk blames the thunk, marked.
import Foundation
import Glibc
import Perf
import PerfTestSupport
import Testing

/// Whether these tests, and the child built with them, were compiled with optimisation.
private let optimisedBuild: Bool = {
    #if DEBUG
        false
    #else
        true
    #endif
}()

extension PerfGlobalStateTests {
    @Suite struct StandardErrorLogProcessTests {
        /// Runs `perf-test-child hang-log <dir> <arguments…>` to its end and returns its stdout
        /// lines and its stderr's lines.
        private func run(_ directory: TemporaryDirectory, _ arguments: [String]) throws -> (
            stdout: [String], stderr: [String]
        ) {
            let stderrPath = directory.url.appendingPathComponent("stderr-\(UUID().uuidString).txt").path
            #expect(FileManager.default.createFile(atPath: stderrPath, contents: nil))
            let (lines, status) = try ChildProcess.run(
                BuildProducts.testChild, ["hang-log", directory.url.appendingPathComponent("data").path] + arguments,
                timeoutSeconds: 60, standardErrorPath: stderrPath)
            #expect(
                ChildProcess.exitedNormally(status) && ChildProcess.exitCode(status) == 0,
                "\(ChildProcess.describe(status))")
            let text = try String(contentsOfFile: stderrPath, encoding: .utf8)
            return (lines, text.split(separator: "\n").map(String.init))
        }

        @Test func aHangOnAWatchedQueueIsExactlyOneLine() throws {
            let directory = try TemporaryDirectory("stderr-log-hang")
            defer { directory.remove() }
            let (stdout, stderr) = try run(directory, ["hang", "log"])
            #expect(stdout == ["done"])
            try #require(stderr.count == 1, "\(stderr)")
            let line = stderr[0]
            // perf: hang 612 ms on child.db.writer in static HangLogChild.loadStore(milliseconds: Swift.Int) -> () (clock_nanosleep(600 ms))
            let fields = line.split(separator: " ")
            #expect(line.hasPrefix("perf: hang "), "\(line)")
            let ms = try #require(fields.count > 3 ? Int(fields[2]) : nil, "\(line)")
            #expect(ms >= 400 && ms <= 1_500, "a 600 ms block: \(line)")
            #expect(
                fields.count > 5 && fields[3] == "ms" && fields[4] == "on" && fields[5] == "child.db.writer", "\(line)")
            #expect(line.contains(" in ") && line.contains("loadStore"), "the culprit: \(line)")
        }

        /// An optimised build merges `loadStoreMerged` and its twin of the same body into one
        /// `merged` function, which is where the child blocks: the line and the ledger name it, and
        /// say that it is merged. A debug build merges nothing, so there the test is skipped.
        @Test(.enabled(if: optimisedBuild, "only an optimised build merges functions"))
        func aHangInAMergedFunctionIsNamedWithTheMark() throws {
            let directory = try TemporaryDirectory("stderr-log-merged")
            defer { directory.remove() }
            let (stdout, stderr) = try run(directory, ["merged", "log"])
            #expect(stdout == ["done"])
            try #require(stderr.count == 1, "\(stderr)")
            // perf: hang 611 ms on child.db.writer in static HangLogChild.loadIndexMerged(milliseconds: Swift.Int) -> () (merged) (clock_nanosleep(600 ms))
            let line = stderr[0]
            let twins = [
                "HangLogChild.loadStoreMerged(milliseconds: Swift.Int) -> () (merged) (",
                "HangLogChild.loadIndexMerged(milliseconds: Swift.Int) -> () (merged) (",
            ]
            #expect(line.contains(" on child.db.writer in "), "\(line)")
            #expect(twins.contains { line.contains($0) }, "the merged function, marked: \(line)")
            let hangs = try LedgerReader(directory: directory.url.appendingPathComponent("data")).readAll().events
                .filter { $0.kind == .hang }
            try #require(hangs.count == 1, "\(hangs)")
            #expect(hangs[0].culprit?.hasPrefix("merged ") == true, "\(hangs[0])")
            #expect(hangs[0].culprit?.contains("Merged(milliseconds:") == true, "\(hangs[0])")
        }

        /// An optimised build inlines `sleepInlined`, where the child blocks, into the block's
        /// closure and the closure into its `partial apply` forwarder: no frame of the program but
        /// that glue is on the stack. The culprit is the glue, marked `(thunk)` and naming the
        /// child's function the closure is in, never unknown. A debug build inlines nothing, so
        /// there the test is skipped.
        @Test(.enabled(if: optimisedBuild, "only an optimised build inlines the blocking function"))
        func aHangInAFunctionInlinedIntoAThunkIsBlamedOnTheThunk() throws {
            let directory = try TemporaryDirectory("stderr-log-inlined-thunk")
            defer { directory.remove() }
            let (stdout, stderr) = try run(directory, ["inlined-thunk", "log"])
            #expect(stdout == ["done"])
            try #require(stderr.count == 1, "\(stderr)")
            // perf: hang 625 ms on child.db.writer in closure () -> () in static perf_test_child.HangLogChild.run(Swift.Array<Swift.String>) -> Swift.Int32 (thunk) (clock_nanosleep(600 ms))
            let line = stderr[0]
            #expect(line.contains(" on child.db.writer in closure "), "\(line)")
            #expect(line.contains(".HangLogChild.run(") && line.contains(" (thunk)"), "the glue, marked: \(line)")
            let hangs = try LedgerReader(directory: directory.url.appendingPathComponent("data")).readAll().events
                .filter { $0.kind == .hang }
            try #require(hangs.count == 1, "\(hangs)")
            let culprit = try #require(hangs[0].culprit, "\(hangs[0])")
            #expect(culprit != "unknown" && culprit.contains("HangLogChild.run("), "\(hangs[0])")
            #expect(SymbolNames.mark(culprit) == .thunk, "\(culprit)")
            #expect(!culprit.contains("sleepInlined"), "inlined, it has no frame: \(culprit)")
        }

        @Test func withoutTheOptionPerfWritesNothingToStandardError() throws {
            let directory = try TemporaryDirectory("stderr-log-off")
            defer { directory.remove() }
            let (stdout, stderr) = try run(directory, ["hang"])
            #expect(stdout == ["done"])
            #expect(stderr == [])
        }

        @Test func aQueueLabelWithAURLAndATokenIsFiltered() throws {
            let directory = try TemporaryDirectory("stderr-log-privacy")
            defer { directory.remove() }
            let (_, stderr) = try run(
                directory, ["hang", "log", "label=https://svc:pw@db.internal:5432/orders?token=s3cret"])
            try #require(stderr.count == 1, "\(stderr)")
            #expect(stderr[0].contains(" on /orders in "), "\(stderr[0])")
            for secret in ["s3cret", "token", "svc:pw", "db.internal", "5432"] {
                #expect(!stderr[0].contains(secret), "\(stderr[0])")
            }
        }

        @Test func aSessionKilledMidHangIsToldByTheNextStart() throws {
            let directory = try TemporaryDirectory("stderr-log-crash")
            defer { directory.remove() }
            // `facade hang` blocks its queue `child.feed` in `parseHugeFeed()` and prints "fatal" once
            // the hang is journalled as in progress.
            let child = try ChildProcess(
                executable: BuildProducts.testChild,
                arguments: ["facade", "hang", directory.url.appendingPathComponent("data").path])
            #expect(child.readLine(timeoutSeconds: 60) == "fatal")
            child.killAndWait()
            #expect(ChildProcess.terminatingSignal(child.wait()) == SIGKILL)

            let (stdout, stderr) = try run(directory, ["start", "log"])
            #expect(stdout == ["done"])
            try #require(stderr.count == 2, "\(stderr)")
            let crashed = stderr[0].split(separator: " ")
            #expect(crashed.count >= 4 && crashed[0] == "perf:" && crashed[1] == "session" && crashed[3] == "crashed")
            #expect(stderr[0].contains("(app crash-child 1, pid \(child.pid))"), "\(stderr[0])")
            let session = crashed.count > 2 ? String(crashed[2]) : "?"
            #expect(stderr[1].hasPrefix("perf: fatal hang "), "\(stderr[1])")
            #expect(stderr[1].contains(" ms on child.feed in ") && stderr[1].contains("parseHugeFeed"), "\(stderr[1])")
            #expect(stderr[1].hasSuffix("(session \(session) crashed)"), "\(stderr[1])")

            // Told once: a further start finds nothing to tell.
            #expect(try run(directory, ["start", "log"]).stderr == [])
        }
    }
}
