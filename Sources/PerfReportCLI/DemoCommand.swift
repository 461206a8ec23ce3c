// `perf-report demo`: runs the sample workload under Perf in this process, builds the report and
// prints its summary: the README's first command.
import Dispatch
import Foundation
import Perf
import PerfReport

enum DemoCommand {
    static let spec = CommandSpec(
        name: "demo", overview: "Run an instrumented sample workload, build its report and print the summary.",
        options: [
            .value("dir", valueName: "dir", help: "The data directory (default: a new temporary one)."),
            .value(
                "output", short: "o", valueName: "file", help: "Where to write (default: ./performance-report.json)."),
            .flag("keep", help: "Keep the temporary data directory, to look at the raw files."),
        ],
        exitCodes: PerfReportCommand.buildExitCodes)

    static func run(_ parsed: CommandSpec.Parsed, progress: (String) -> Void) -> CommandResult {
        let directory: URL
        // A directory the demo made for itself is removed once the report holds its contents,
        // unless --keep asks to look at the raw files.
        let temporary = parsed.value("dir") == nil && !parsed.flag("keep")
        if let given = parsed.value("dir") {
            directory = URL(fileURLWithPath: given)
        } else {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "perf-demo-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        }
        let shownOutput = parsed.value("output") ?? ReportBuilder.fileName
        let output = URL(fileURLWithPath: shownOutput)
        guard !Perf.isInstalled else {
            return CommandResult(
                stderr: "perf-report: the demo installs Perf itself; Perf is already installed in this process\n",
                status: .usage)
        }
        Perf.install(
            Perf.Configuration(
                directory: directory, app: Perf.AppInfo(name: "perf-demo", version: "1.0", build: "demo"),
                recording: .enabled, diagnosticsIntervalSeconds: 0))
        guard Perf.dataDirectory != nil else {
            Perf.shutdown()
            return CommandResult(
                stderr: "perf-report: cannot write the demo's data directory '\(directory.path)'\n",
                status: .invalidInput)
        }
        progress("perf-report demo: recording into \(directory.path)")
        let (hangCaught, notes) = runWorkload(progress: progress)
        do {
            try Perf.captureDiagnostics()
        } catch {
            progress("perf-report demo: \(error)")
        }
        Perf.shutdown()
        let summary: ReportSummary
        do {
            try ReportBuilder(directory: directory).write(to: output)
            summary = try ReportSummary(contentsOf: output)
        } catch {
            return PerfReportCommand.invalidInput(error)
        }
        var text = summary.text
        let stormName = DemoWorkload.stormNote.description
        let stormLines =
            (try? LedgerReader(directory: directory).readAll().events)?
            .filter { $0.kind == .note && $0.name == stormName }.count ?? 0
        if temporary { try? FileManager.default.removeItem(at: directory) }
        // The figures of the NOTES table's row, so the sentence and the table agree.
        let row = summary.notes.first { $0.name == stormName }
        text +=
            "\nNote floor: \(notes) \(stormName) notes in a burst: \(row?.count ?? 0) written, "
            + "\(row?.suppressed ?? 0) held back and counted, in \(stormLines) ledger line(s): "
            + "the same-name floor (30 s) keeps a storm from flooding the ledger.\n"
        text +=
            temporary
            ? "\nData directory: removed (rerun with --keep, or --dir <dir>, to look at the raw files)"
            : "\nData directory: \(directory.path) (the ledger perf-events.jsonl, payloads in perf-diagnostics/)"
        text += "\nReport: \(shownOutput)\n"
        if !hangCaught { text += "(the watchdog did not report the injected hang in time on this machine)\n" }
        text += "Next: \(currentInvocation) summary \(shellQuoted(shownOutput)) --format json\n"
        return CommandResult(stdout: text)
    }

    /// Runs the workload; returns whether the watchdog reported the injected hang, and how many
    /// notes the storm sent.
    static func runWorkload(progress: (String) -> Void) -> (hangCaught: Bool, notes: Int) {
        let feedQueue = DispatchQueue(label: "demo.feed")
        var configuration = Perf.HangWatchdog.Configuration()
        configuration.startupGrace = .milliseconds(100)
        // The demo exists to show a hang: run under a debugger, it should still show one.
        configuration.suppressWhenDebugging = false
        let watchdog = Perf.HangWatchdog(monitoring: .queue(feedQueue), configuration: configuration)
        watchdog.start()
        defer { watchdog.stop() }
        // No Perf.markReady(): its `boot` span runs from the process start, and under
        // `swift run perf-report demo` the process that started is swift-run, which built the
        // package before exec'ing the demo: `boot` would report the build as start-up time.
        progress("perf-report demo: fetching pages and rendering frames…")
        DemoWorkload.fetchPages()
        DemoWorkload.renderFrames()
        let notes = DemoWorkload.reconnectStorm()
        progress("perf-report demo: a storm of \(notes) reconnect notes…")
        // Let the watchdog's grace period pass before the hang, so it is measured, not excused.
        DemoWorkload.work(milliseconds: 200)
        progress("perf-report demo: parsing a huge feed on the demo.feed queue…")
        let done = DispatchSemaphore(value: 0)
        feedQueue.async {
            // Measured as a span too, so the timeline shows the work under the hang it causes; its
            // detail is a URL, of which the privacy filter writes only the path.
            let span = Perf.begin("demo.parseFeed", slowMs: 250)
            DemoWorkload.parseHugeFeed()
            span.end(detail: DemoWorkload.feedURL)
            done.signal()
        }
        done.wait()
        // The hang line is written when the watchdog sees the queue serve its ping again: wait for
        // that condition, bounded so a starved machine cannot stall the demo.
        let deadline = DispatchTime.now() + .seconds(5)
        while watchdog.statistics.hangs == 0, DispatchTime.now() < deadline {
            _ = done.wait(timeout: .now() + .milliseconds(20))
        }
        return (watchdog.statistics.hangs > 0, notes)
    }
}
