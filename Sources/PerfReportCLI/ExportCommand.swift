// `perf-report export`: a report as a Chrome trace, an OTLP/JSON request, Prometheus metrics, an
// HTML page or a pprof profile, on stdout or written atomically to a file.
import Foundation
import Perf
import PerfReport

/// One export format: its name on the command line, what it shows, and its renderer.
struct ExportFormat: Sendable {
    /// What a format draws, which decides how a report without intervals is handled.
    enum Kind: Sendable {
        /// A timeline only: without spans, hangs or notes there is nothing to write (exit 4).
        case trace
        /// A page of timelines and histograms: still worth writing with histograms alone.
        case page
        /// Metrics from histograms and totals: intervals play no part.
        case metrics
        /// The span sampler's profiles, binary: only to a file, and nothing to write without them.
        case profile
    }

    var name: String
    var kind: Kind
    var render: @Sendable (ExportInput) -> [UInt8]
}

enum ExportCommand {
    /// Every format `--format` accepts, in the order help lists them.
    static let formats: [ExportFormat] = [
        .init(name: "chrome", kind: .trace, render: ChromeTraceExport.render),
        .init(name: "otlp", kind: .trace, render: OTLPExport.render),
        .init(name: "prometheus", kind: .metrics, render: PrometheusExport.render),
        .init(name: "html", kind: .page, render: HTMLExport.render),
        .init(name: "pprof", kind: .profile, render: PprofExport.render),
    ]

    static var formatList: String { choiceList(formats.map(\.name)) }

    static let spec = CommandSpec(
        name: "export",
        overview: "Export a performance report for trace viewers, OpenTelemetry, Prometheus or pprof.",
        arguments: [.init(name: "report", help: "The performance-report.json to export.")],
        options: [
            .value("format", valueName: "format", choices: formats.map(\.name), required: true, help: "\(formatList)."),
            .value(
                "output", short: "o", valueName: "file",
                help: "Write here (temporary file, then rename); default: stdout."),
        ],
        exitCodes: [
            (.success, ExitCode.success.meaning), (.usage, ExitCode.usage.meaning),
            (.invalidInput, ExitCode.invalidInput.meaning),
            (.incompleteData, "nothing to export: no spans, hangs or notes for a trace format, no profiles for pprof"),
        ])

    static let noIntervalsMessage = "perf-report: no span intervals in this report; histograms only\n"

    static func run(_ parsed: CommandSpec.Parsed) -> CommandResult {
        // The parser demands --format and accepts only the names of `formats`.
        guard let format = formats.first(where: { $0.name == parsed.value("format") }) else {
            preconditionFailure("export parsed without a known --format")
        }
        let path = parsed.positionals[0]
        // A gzipped profile is bytes, not text: stdout carries text only.
        if format.kind == .profile, parsed.value("output") == nil {
            return PerfReportCommand.usageError(
                .other("--format \(format.name) writes a binary file, not text for stdout; give it one: -o <file>"),
                spec)
        }
        let input: ExportInput
        do {
            input = try ExportInput(contentsOf: URL(fileURLWithPath: path))
        } catch {
            return PerfReportCommand.invalidInput(error)
        }
        var stderr = ""
        if format.kind == .profile, !input.hasProfiles {
            return CommandResult(
                stderr: "perf-report: nothing to export from '\(path)': no span line has a profile (the span sampler "
                    + "profiles spans past their budget); no file written\n",
                status: .incompleteData)
        }
        if !input.hasIntervals, format.kind == .trace || format.kind == .page { stderr += noIntervalsMessage }
        if format.kind == .trace, !input.hasTraceEvents {
            stderr +=
                "perf-report: nothing to export from '\(path)': no span intervals, slow spans, hangs or notes "
                + "for a \(format.name) trace; no file written\n"
            return CommandResult(stderr: stderr, status: .incompleteData)
        }
        let bytes = format.render(input)
        guard let output = parsed.value("output") else {
            return CommandResult(stdout: String(decoding: bytes, as: UTF8.self), stderr: stderr)
        }
        do {
            try ExportFile.write(bytes, to: URL(fileURLWithPath: output))
        } catch {
            var failure = PerfReportCommand.invalidInput(error)
            failure.stderr = stderr + failure.stderr
            return failure
        }
        return CommandResult(stdout: output + "\n", stderr: stderr)
    }
}
