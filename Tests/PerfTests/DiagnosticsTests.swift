// Diagnostic snapshots: procfs parsing, the payload round trip, the folder's rules, and the
// facade's captures (on demand, at shutdown) and report.
import Foundation
import PerfCore
import PerfReport
import PerfTestSupport
import Testing

@testable import Perf

@Suite struct DiagnosticsTests {
    @Test func parsesStatusStatAndPressureText() {
        var figures = ProcessFigures()
        figures.applyStatus(
            "Name:\tx\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\nThreads:\t7\nvoluntary_ctxt_switches:\t11\n"
                + "nonvoluntary_ctxt_switches:\t3\n")
        // The command name holds a space and a parenthesis; fields count after the last ')'.
        figures.applyStat(
            "42 (my (odd) app) S 1 42 42 0 -1 4194560 500 0 6 0 250 130 0 0 20 0 7 0 100 0 0", ticksPerSecond: 100)
        figures.applyPressure(
            "some avg10=0.00 avg60=0.00 avg300=0.00 total=1234\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=56\n",
            resource: "io")
        #expect(figures.rssBytes == 1_048_576)
        #expect(figures.peakRssBytes == 2_097_152)
        #expect(figures.threads == 7)
        #expect(figures.voluntaryContextSwitches == 11)
        #expect(figures.involuntaryContextSwitches == 3)
        #expect(figures.minorFaults == 500)
        #expect(figures.majorFaults == 6)
        #expect(figures.cpuUserMs == 2500)
        #expect(figures.cpuSystemMs == 1300)
        #expect(figures.pressureTotalUs == ["io.some": 1234, "io.full": 56])
    }

    @Test func readsTheRunningProcess() {
        let figures = ProcessFigures.current()
        #expect((figures.rssBytes ?? 0) > 0)
        #expect((figures.peakRssBytes ?? 0) >= (figures.rssBytes ?? 0))
        #expect((figures.threads ?? 0) >= 1)
        #expect((figures.openFds ?? 0) >= 3)
    }

    @Test func payloadRoundTripsAndRejectsANewerVersion() throws {
        var histogram = Perf.Histogram()
        histogram.record(nanos: 12_345_678)
        var process = ProcessFigures()
        process.rssBytes = 1
        process.pressureTotalUs = ["cpu.some": 9]
        let snapshot = DiagnosticSnapshot(
            session: "s1", takenAtMs: 1_796_216_400_123, reason: "on-demand",
            app: Perf.AppInfo(name: "a", version: "1"),
            host: .current(), process: process, spans: ["x": histogram], hangs: ["main": histogram])
        #expect(try DiagnosticSnapshot(jsonBytes: snapshot.jsonBytes) == snapshot)
        let newer = String(decoding: snapshot.jsonBytes, as: UTF8.self)
            .replacingOccurrences(of: "\"schemaVersion\":1", with: "\"schemaVersion\":2")
        #expect(throws: Perf.ReportError.self) { try DiagnosticSnapshot(jsonBytes: Array(newer.utf8)) }
        #expect(throws: Perf.ReportError.self) {
            try DiagnosticSnapshot(jsonBytes: Array(snapshot.jsonBytes.dropLast(9)))
        }
    }

    @Test func theFolderKeepsTheNewest24AndIgnoresTemporaryFiles() throws {
        let directory = try TemporaryDirectory("diagnostics")
        defer { directory.remove() }
        var names: [String] = []
        for index in 0..<30 {
            let name = DiagnosticFiles.fileName(takenAtMs: 1_796_216_400_000 + Int64(index) * 1000, session: "s/1")
            names.append(name)
            _ = try DiagnosticFiles.write(Array("{}".utf8), name: name, dataDirectory: directory.url.path)
        }
        let folder = directory.url.appendingPathComponent(DiagnosticFiles.directoryName).path
        try Data("{\"half".utf8).write(to: URL(fileURLWithPath: folder + "/.tmp-1-" + names[0]))
        #expect(try DiagnosticFiles.list(folder: folder) == Array(names.suffix(24)))
        #expect(names[0] == "20261202T130000000Z-s_1.json")
        let mode = try FileManager.default.attributesOfItem(atPath: folder + "/" + names[29])[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }
}

extension PerfGlobalStateTests {
    @Suite struct DiagnosticsFacadeTests {
        private func install(_ directory: TemporaryDirectory) {
            let configuration = Perf.Configuration(
                directory: directory.url, app: Perf.AppInfo(name: "diagnostics-test", version: "2.0", build: "9"),
                recording: .enabled, diagnosticsIntervalSeconds: 0)
            #expect(Perf.install(configuration, environment: [:], clock: SystemClock(), report: { _ in }))
        }

        @Test func captureWritesAPayloadAndALedgerLineAndShutdownTakesOneToo() throws {
            let directory = try TemporaryDirectory("diagnostics")
            defer { directory.remove() }
            install(directory)
            Perf.begin("diagnostics.span", slowMs: 10_000).end()
            let url = try Perf.captureDiagnostics()
            let snapshot = try DiagnosticSnapshot(jsonBytes: [UInt8](Data(contentsOf: url)))
            #expect(snapshot.reason == "on-demand")
            #expect(snapshot.app.name == "diagnostics-test")
            #expect(snapshot.spans["diagnostics.span"].map { $0.count >= 1 } == true)
            Perf.shutdown()
            let lines = try LedgerReader(directory: directory.url).readAll().events.filter {
                $0.kind == .diagnostic
            }
            #expect(lines.map(\.name) == ["on-demand", "shutdown"])
            #expect(lines.first?.extra["path"] == .string(DiagnosticFiles.directoryName + "/" + url.lastPathComponent))
            // Not recording any more: both report calls refuse the same way.
            #expect(throws: Perf.ReportError(.notRecording, path: "", notRecordingMessage)) {
                try Perf.captureDiagnostics()
            }
            #expect(throws: Perf.ReportError(.notRecording, path: "", notRecordingMessage)) {
                try Perf.prepareReport()
            }
        }

        /// A span never over its budget writes no ledger line; its budget and where it began still
        /// reach the report, through the snapshot (`"budgetMs": null, "sites": []`).
        @Test func aSpanThatNeverBreachedCarriesItsBudgetAndCallSite() throws {
            let directory = try TemporaryDirectory("diagnostics")
            defer { directory.remove() }
            install(directory)
            defer { Perf.shutdown() }
            let line = #line + 1
            Perf.begin("report.quiet", slowMs: 60_000).end()
            let report = try PerformanceReport(
                bytes: try Data(contentsOf: try Perf.prepareReport()).map { $0 }, path: "r")
            let span = try #require(report.spans["report.quiet"])
            #expect(span.overBudget == 0 && span.count == 1)
            #expect(span.budgetMs == 60_000)
            #expect(span.sites == ["PerfTests/DiagnosticsTests.swift:\(line)"])
        }

        private let notRecordingMessage =
            "no data directory to report on: call Perf.install with recording enabled first"

        @Test func prepareReportGivesTheBuildersBytesForTheDirectory() throws {
            let directory = try TemporaryDirectory("diagnostics")
            defer { directory.remove() }
            install(directory)
            defer { Perf.shutdown() }
            Perf.begin("report.span", slowMs: 0).end()
            let output = directory.url.appendingPathComponent("out.json")
            #expect(try Perf.prepareReport(to: output) == output)
            let written = try [UInt8](Data(contentsOf: output))
            // The CLI's `build --dir` runs this same builder on the same directory.
            #expect(written == (try ReportBuilder(directory: directory.url).build()))
            let report = try PerformanceReport(bytes: written, path: output.path)
            #expect(report.spans["report.span"]?.overBudget == 1)
            #expect(report.sessions.first?.status == .active)
        }

        @Test func thePeriodicTimerTakesSnapshotsUntilShutdown() throws {
            let directory = try TemporaryDirectory("diagnostics")
            defer { directory.remove() }
            let configuration = Perf.Configuration(
                directory: directory.url, app: Perf.AppInfo(name: "diagnostics-timer"), recording: .enabled,
                diagnosticsIntervalSeconds: 0.05)
            #expect(Perf.install(configuration, environment: [:], clock: SystemClock(), report: { _ in }))
            // Wait for the condition (a periodic line), bounded; the timer runs on real time.
            func periodicLines() -> Int {
                let events = (try? LedgerReader(directory: directory.url).readAll().events) ?? []
                return events.filter { $0.kind == .diagnostic && $0.name == "periodic" }.count
            }
            _ = pollUntil(seconds: 10) { periodicLines() >= 2 }
            Perf.shutdown()
            let afterShutdown = periodicLines()
            #expect(afterShutdown >= 2)
            let events = try LedgerReader(directory: directory.url).readAll().events
            #expect(events.contains { $0.kind == .diagnostic && $0.name == "shutdown" })
            let folder = directory.url.appendingPathComponent(DiagnosticFiles.directoryName).path
            #expect(try DiagnosticFiles.list(folder: folder).count <= DiagnosticFiles.keep)
        }

        @Test func prepareReportWithoutRecordingSaysWhatToDo() {
            Perf.shutdown()
            #expect(throws: Perf.ReportError.self) { try Perf.prepareReport() }
        }
    }
}
