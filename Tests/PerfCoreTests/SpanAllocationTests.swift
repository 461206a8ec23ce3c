// The under-budget scoped hot path allocates nothing, measured in a separate process.
import Foundation
import Testing

/// Runs the span benchmark group in a `perf-bench` child and reads its allocation row.
///
/// Why a child: the allocation counter hooks `_swift_allocObject` process-wide, and other suites
/// allocate concurrently in this process; `perf-bench` measures 10,000 begin+end pairs with
/// nothing else running.
@Suite struct SpanAllocationTests {
    private struct Row: Decodable {
        var name: String
        var median: Double
        var allocationsPerOp: Double?
    }

    private struct Document: Decodable {
        var rows: [Row]
    }

    @Test func underBudgetBeginEndAllocatesNothing() throws {
        let bench = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("perf-bench")
        try #require(FileManager.default.isExecutableFile(atPath: bench.path), "build perf-bench first")
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("span-alloc-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: output) }

        let process = Process()
        process.executableURL = bench
        process.arguments = ["--quick", "--only", "span", "--json", output.path]
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let diagnostics = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "perf-bench failed:\n\(diagnostics)")

        let rows = try JSONDecoder().decode(Document.self, from: Data(contentsOf: output)).rows
        let allocations = try #require(rows.first { $0.name == "scoped begin+end allocations" })
        #expect(allocations.median == 0, "allocations per under-budget begin+end pair")
        let hotPath = try #require(rows.first { $0.name.hasPrefix("scoped begin+end (under budget") })
        #expect(hotPath.allocationsPerOp == 0)
        let slowPath = try #require(rows.first { $0.name.hasPrefix("over-budget end") })
        #expect((slowPath.allocationsPerOp ?? 0) > 0, "the probe sees the slow path's record strings")
    }
}
