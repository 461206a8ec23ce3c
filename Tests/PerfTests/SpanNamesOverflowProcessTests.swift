// Span names past span memory's capacity, in a real process (`perf-test-child span-names`): their
// ends are counted, and the first one is said once on stderr, never again however many follow.
import Foundation
import PerfTestSupport
import Testing

@testable import Perf

@Suite struct SpanNamesOverflowProcessTests {
    @Test func namesPastTheCapacityAreSaidOnceOnStandardError() throws {
        let directory = try TemporaryDirectory("span-names")
        defer { directory.remove() }
        let stderrPath = directory.url.appendingPathComponent("stderr.txt").path
        #expect(FileManager.default.createFile(atPath: stderrPath, contents: nil))
        let (lines, status) = try ChildProcess.run(
            BuildProducts.testChild, ["span-names", directory.url.appendingPathComponent("data").path],
            timeoutSeconds: 60, standardErrorPath: stderrPath)
        #expect(
            ChildProcess.exitedNormally(status) && ChildProcess.exitCode(status) == 0,
            "\(ChildProcess.describe(status))")
        #expect(lines == ["done"])
        let stderr = try String(contentsOfFile: stderrPath, encoding: .utf8).split(separator: "\n")
        let full = stderr.filter { $0.hasPrefix("perf: span memory is full") }
        #expect(full.count == 1, "\(stderr)")
        #expect(full.first?.contains("16 span names") == true, "\(stderr)")
        #expect(full.first?.contains("spanNameCapacity") == true, "\(stderr)")
    }
}
