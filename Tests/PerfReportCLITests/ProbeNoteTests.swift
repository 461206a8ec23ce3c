// The USDT probes Perf compiles into a program (CPerfProbes.h): `readelf -n` lists each with its
// argument string, and perf-report's own note reader agrees; perf script lines parse.
import Foundation
import PerfReportCLI
import PerfTestSupport
import Testing

/// Where a tool is on PATH, or nil.
func probeTool(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    return path.split(separator: ":").map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
}

/// The probes and their argument counts (all 8-byte registers).
let expectedProbes: [String: Int] = [
    "span_end": 5, "span_begin": 2, "hang": 4, "hitch": 4, "note": 1, "session_start": 1, "session_end": 1,
]

@Suite struct ProbeNoteTests {
    static let child = BuildProducts.testChild

    @Test(.enabled(if: probeTool("readelf") != nil, "readelf (binutils) is not installed"))
    func readelfListsEveryProbeWithItsArguments() throws {
        let readelf = try #require(probeTool("readelf"))
        let text = try ProbeAttach.run(readelf, ["-n", Self.child], what: "readelf")
        var found: [String: Set<String>] = [:]
        var provider = "", name = ""
        for line in text.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line.hasPrefix("Provider: ") { provider = String(line.dropFirst(10)) }
            if line.hasPrefix("Name: ") { name = String(line.dropFirst(6)) }
            if line.hasPrefix("Arguments: "), provider == "perf" {
                found[name, default: []].insert(String(line.dropFirst(11)))
            }
        }
        #expect(Set(found.keys) == Set(expectedProbes.keys), "\(found)")
        for (probe, arguments) in found {
            for argument in arguments {
                let operands = argument.split(separator: " ")
                #expect(operands.count == expectedProbes[probe], "\(probe): \(argument)")
                #expect(operands.allSatisfy { $0.hasPrefix("8@%") }, "\(probe): \(argument) are 8-byte registers")
            }
        }
        // The semaphores tracers increment, in section .probes.
        let sections = try ProbeAttach.run(readelf, ["-S", Self.child], what: "readelf")
        #expect(sections.contains(".probes") && sections.contains(".stapsdt.base"))
    }

    @Test func theNoteReaderFindsEveryProbeWithASemaphore() throws {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.child)))
        let sites = try ProbeNotes.sites(in: bytes, path: Self.child)
        #expect(Set(sites.map(\.name)) == Set(expectedProbes.keys))
        for site in sites {
            #expect(site.operands.count == expectedProbes[site.name], "\(site)")
            #expect(site.semaphoreOffset != nil, "\(site.name) has a semaphore")
            #expect(site.operands.allSatisfy { ProbeEvents.register($0) != nil }, "\(site.arguments)")
        }
        #expect(throws: ProbeNotes.Failure.self) { try ProbeNotes.sites(in: Array("#!/bin/sh\n".utf8), path: "x") }
    }

    @Test func perfScriptLinesParseWithQuotedStrings() {
        let text = """
             4242/4243 44608.734566123: perf_attach_7:span_end_2: (55e0b4c02ccc) name="api.get" ns=2001956 budget_ns=50000000 exit=0 over=0
             4242/4250 44609.1: perf_attach_7:hang: (55e0b4c02cdd) target="main queue" lower_ms=400 upper_ms=450 culprit="static A.b() -> ()"
             4242/4243 44610.0: other:span_end: (1) name="x" ns=1
            """
        let hits = ProbeScript.hits(
            text, group: "perf_attach_7", probeOfEvent: ["span_end_2": "span_end", "hang": "hang"])
        #expect(hits.count == 2)
        #expect(hits.first?.arguments["name"] == "api.get")
        #expect(hits.first?.number("ns") == 2_001_956)
        #expect(hits.first?.timeNanos == 44_608_734_566_123)
        #expect(hits.first?.tid == 4243)
        #expect(hits.last?.arguments["target"] == "main queue")
        #expect(hits.last?.arguments["culprit"] == "static A.b() -> ()")
        #expect(hits.last?.number("upper_ms") == 450)
        let summary = ProbeSpanSummary.summaries(hits)
        #expect(summary.map(\.name) == ["api.get"] && summary.first?.count == 1)
        #expect(
            summary.first?.p95Nanos == 2_001_956 && summary.first?.maxNanos == 2_001_956
                && summary.first?.overBudget == 0)
    }
}
