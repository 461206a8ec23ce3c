// Where a verdict goes, shared by `check` and `compare`: the chosen format on stdout (text on
// stderr), the verdict file for `-o` on every path, the Markdown summary for GitHub Actions.
import Foundation
import Perf
import PerfReport

/// How `check` and `compare` print their verdict (`--format`).
enum VerdictFormat: String, Sendable, CaseIterable {
    /// Readable lines (check: on stderr; compare: a table on stdout).
    case text
    /// The verdict file's JSON.
    case json
    /// GitHub Actions workflow commands, plus the job summary.
    case github
    /// JUnit XML.
    case junit
    /// A Markdown table.
    case markdown
}

enum VerdictOutput {
    /// `result` (a usage error or bad input), with the error verdict written to `output` first.
    static func failing(
        _ result: CommandResult, command: PerfReportCommand.Subcommand, output: String?
    ) -> CommandResult {
        guard let output else { return result }
        let line = result.stderr.split(separator: "\n").first.map(String.init) ?? "error"
        let message = line.hasPrefix("perf-report: ") ? String(line.dropFirst("perf-report: ".count)) : line
        var result = result
        if let problem = write(
            BudgetVerdict.errorJSON(command: command.rawValue, exitCode: result.status.rawValue, message: message),
            to: output)
        {
            result.stderr += "perf-report: \(problem)\n"
        }
        return result
    }

    /// Writes the verdict file; the problem in words when it cannot.
    static func write(_ text: String, to path: String) -> String? {
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            return nil
        } catch {
            return "cannot write verdict file '\(path)': \(error.localizedDescription)"
        }
    }

    /// The verdict in `format`, the verdict file, the step summary; the status is the verdict's.
    static func render(
        _ verdict: BudgetVerdict, command subcommand: PerfReportCommand.Subcommand, format: VerdictFormat,
        output: String?,
        environment: [String: String], currentDirectory: String
    ) -> CommandResult {
        let command = subcommand.rawValue
        var result = CommandResult(status: ExitCode(verdict.outcome))
        switch format {
        case .json: result.stdout = verdict.json(command: command)
        case .junit: result.stdout = verdict.junit(command: command)
        case .markdown: result.stdout = verdict.markdown(command: command)
        case .github:
            let locator = SourceLocator.forCheckout(environment: environment, currentDirectory: currentDirectory)
            result.stdout = verdict.githubCommands(resolveFile: locator.path(forFileID:))
            if let summary = environment["GITHUB_STEP_SUMMARY"], !summary.isEmpty,
                let problem = append(verdict.markdown(command: command), to: summary)
            {
                result.stderr += "perf-report: \(problem)\n"
            }
        case .text:
            if subcommand == .compare { result.stdout = verdict.comparisonTable }
        }
        result.stderr +=
            format == .text ? verdict.text(command: command) : verdict.summaryLine(command: command) + "\n"
        if let output, let problem = write(verdict.json(command: command), to: output) {
            result.stderr += "perf-report: \(problem)\n"
            result.status = .invalidInput
        }
        return result
    }

    static func append(_ text: String, to path: String) -> String? {
        guard let handle = FileHandle(forWritingAtPath: path) ?? create(path) else {
            return "cannot append the summary to '\(path)' ($GITHUB_STEP_SUMMARY)"
        }
        defer { try? handle.close() }
        do {
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(text.utf8))
            return nil
        } catch {
            return "cannot append the summary to '\(path)': \(error.localizedDescription)"
        }
    }

    static func create(_ path: String) -> FileHandle? {
        guard FileManager.default.createFile(atPath: path, contents: nil) else { return nil }
        return FileHandle(forWritingAtPath: path)
    }
}
