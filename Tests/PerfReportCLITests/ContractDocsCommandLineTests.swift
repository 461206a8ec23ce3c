// CommandLine.md against perf-report: the exit codes each command documents are the ones its help
// lists and the ones it returns; the options are the ones it parses; the verdict file's keys are
// documented.
import Foundation
import Perf
import PerfReportCLI
import Testing

/// perf-report run in this process, as numbers and text only.
enum ContractDocsCLI {
    /// The only place that knows PerfReportCLI's Swift API: a renamed result or exit-status type is
    /// a fix here, nowhere else.
    static func run(_ arguments: [String]) -> (stdout: String, stderr: String, status: Int) {
        let result = PerfReportCommand.run(arguments, environment: [:], progress: { _ in })
        return (result.stdout, result.stderr, Int(result.status.rawValue))
    }

    /// The codes of the `EXIT CODES:` section of a help text.
    static func exitCodes(inHelp help: String) -> Set<Int> {
        Set(
            lines(of: help, after: "EXIT CODES:").compactMap { line in
                line.hasPrefix("  ") ? line.split(separator: " ").first.flatMap { Int($0) } : nil
            })
    }

    /// The long options of the `OPTIONS:` section of a help text, `--help` aside.
    static func options(inHelp help: String) -> Set<String> {
        var options: Set<String> = []
        for line in lines(of: help, after: "OPTIONS:") where line.hasPrefix("  -") {
            for word in line.split(separator: " ") where word.hasPrefix("--") && word != "--help" {
                options.insert(String(word.prefix { $0 != "," }))
            }
        }
        return options
    }

    /// The command names of the `SUBCOMMANDS:` section.
    static func subcommands(inHelp help: String) -> Set<String> {
        Set(
            lines(of: help, after: "SUBCOMMANDS:").compactMap { line -> String? in
                guard line.hasPrefix("  "), !line.hasPrefix("   "), let word = line.split(separator: " ").first,
                    word.allSatisfy({ $0.isLowercase })
                else { return nil }
                return String(word)
            })
    }

    /// The lines after `heading` up to the next blank line that is followed by another heading.
    static func lines(of text: String, after heading: String) -> [Substring] {
        let all = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = all.firstIndex(where: { $0 == heading }) else { return [] }
        return Array(all[(start + 1)...].prefix { !$0.hasSuffix(":") || $0.hasPrefix(" ") })
    }
}

@Suite struct ContractDocsCommandLineTests {
    static func article() throws -> ContractArticle { try ContractArticle(module: "PerfReport", "CommandLine") }

    /// code → the commands that can return it, from the exit-code table.
    static func documentedExitCodes() throws -> [Int: Set<String>] {
        var codes: [Int: Set<String>] = [:]
        for row in try article().table(under: "## Exit codes") {
            guard let code = Int(row.key), let commands = row.cells.last else { continue }
            codes[code] = Set(ContractArticle.backticked(commands))
        }
        return codes
    }

    static func documentedCodes(of command: String) throws -> Set<Int> {
        Set(try documentedExitCodes().filter { $0.value.contains(command) }.keys)
    }

    @Test func theTopLevelHelpListsTheDocumentedCodesAndCommands() throws {
        let documented = try Self.documentedExitCodes()
        #expect(documented.count >= 5, "the exit-code table was found")
        let help = ContractDocsCLI.run(["--help"])
        #expect(help.status == 0)
        #expect(ContractDocsCLI.exitCodes(inHelp: help.stdout) == Set(documented.keys))
        let commands = ContractDocsCLI.subcommands(inHelp: help.stdout)
        #expect(commands.count >= 6, "SUBCOMMANDS was read: \(commands)")
        #expect(Set(documented.values.flatMap { $0 }) == commands, "the commands column names every command")
    }

    @Test(arguments: ["demo", "build", "summary", "check", "compare", "export", "attach"])
    func eachCommandsHelpListsItsDocumentedCodesAndOptions(command: String) throws {
        let help = ContractDocsCLI.run([command, "--help"])
        #expect(help.status == 0)
        #expect(ContractDocsCLI.exitCodes(inHelp: help.stdout) == (try Self.documentedCodes(of: command)))
        let options = Set(try Self.article().table(under: "## perf-report \(command)").map(\.key))
        #expect(!options.isEmpty, "CommandLine.md has an options table under `## perf-report \(command)`")
        #expect(ContractDocsCLI.options(inHelp: help.stdout) == options)
    }

    /// Inputs that provoke each documented code of each command, run in process. `demo` is left
    /// to the binary (it installs Perf, which this process must not): see the demo cases below.
    @Test func everyDocumentedCodeIsWhatTheCommandReturns() throws {
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func write(_ text: String, _ name: String) throws -> String {
            let url = directory.appendingPathComponent(name)
            try Data(text.utf8).write(to: url)
            return url.path
        }
        let golden = CLIFixture.golden.path
        let missing = directory.appendingPathComponent("missing.json").path
        let count = { (max: Int) in #"{"version":1,"spans":[{"match":"api.get","limits":{"count":{"max":\#(max)}}}]}"# }
        let pass = try write(count(1000), "pass.json")
        let breach = try write(count(1), "breach.json")
        let absent = try write(
            #"{"version":1,"spans":[{"match":"no.such.span","limits":{"count":{"max":1}}}]}"#, "absent.json")
        let invalid = try write("{", "invalid.json")
        // Valid files, but time budgets on a debug build: refused as incomplete data, not bad input.
        let debug = try write(
            CheckFixture.report(
                ["api.get": .init(count: 5, p50: 1, p95: 2, max: 3, site: "A/B.swift:1")], build: "debug"),
            "debug.json")
        let timed = try write(
            #"{"version":1,"spans":[{"match":"api.get","limits":{"p50":{"max":"1s"}}}]}"#, "timed.json")
        let goldenText = try String(contentsOf: CLIFixture.golden, encoding: .utf8)
        // Ten times slower medians: a regression under any floor.
        var slower = try #require(try JSONSerialization.jsonObject(with: Data(goldenText.utf8)) as? [String: Any])
        var spans = try #require(slower["spans"] as? [String: [String: Any]])
        for (name, var span) in spans {
            span["p50Ms"] = ((span["p50Ms"] as? Double) ?? 1) * 10 + 100
            spans[name] = span
        }
        slower["spans"] = spans
        let head = try write(
            String(decoding: try JSONSerialization.data(withJSONObject: slower), as: UTF8.self), "head.json")
        let empty = try write(#"{"schema":"perf-report","schemaVersion":1,"spans":{},"sessions":[]}"#, "empty.json")
        let out = directory.appendingPathComponent("out").path

        let cases: [(command: String, code: Int, arguments: [String])] = [
            ("demo", 2, ["demo", "--bogus"]),
            ("build", 0, ["build", "--dir", CLIFixture.data.path, "-o", out]),
            ("build", 2, ["build"]),
            ("build", 3, ["build", "--dir", missing]),
            ("summary", 0, ["summary", golden]),
            ("summary", 2, ["summary"]),
            ("summary", 3, ["summary", missing]),
            ("check", 0, ["check", golden, "--budgets", pass]),
            ("check", 1, ["check", golden, "--budgets", breach]),
            ("check", 2, ["check", golden]),
            ("check", 3, ["check", golden, "--budgets", invalid]),
            ("check", 4, ["check", golden, "--budgets", absent]),
            ("check", 4, ["check", debug, "--budgets", timed]),
            ("compare", 0, ["compare", golden, golden]),
            ("compare", 1, ["compare", golden, head]),
            ("compare", 2, ["compare", golden]),
            ("compare", 3, ["compare", golden, missing]),
            ("export", 0, ["export", golden, "--format", "prometheus"]),
            ("export", 2, ["export", golden]),
            ("export", 3, ["export", missing, "--format", "chrome"]),
            ("export", 4, ["export", empty, "--format", "chrome"]),
            ("attach", 2, ["attach"]),
            ("attach", 2, ["attach", "--pid", "1", "--seconds", "0"]),
            ("attach", 3, ["attach", "--pid", "999999999"]),
        ]
        for (_, code, arguments) in cases {
            let result = ContractDocsCLI.run(arguments)
            #expect(result.status == code, "perf-report \(arguments.joined(separator: " ")): \(result.stderr)")
        }
        var provoked = Set(cases.map { "\($0.command) \($0.code)" })
        provoked.formUnion(Self.demoCases.map { "demo \($0.code)" })
        // Exit 0 needs root, perf and uprobes: ProbeRecordTests runs `attach` against a live child.
        provoked.insert("attach 0")
        for (code, commands) in try Self.documentedExitCodes() {
            for command in commands {
                #expect(provoked.contains("\(command) \(code)"), "nothing here provokes `\(command)` exit \(code)")
            }
        }
        for (command, code, _) in cases {
            #expect((try Self.documentedCodes(of: command)).contains(code), "`\(command)` exit \(code) is undocumented")
        }
    }

    /// `demo` codes that need a process of their own (the demo installs Perf).
    static let demoCases: [(code: Int, arguments: [String])] = [
        (0, ["demo", "--dir", "data", "-o", "report.json"]),
        (3, ["demo", "--dir", "/proc/perf-contract-docs/data"]),
    ]

    @Test func theDemoReturnsItsDocumentedCodesFromTheBinary() throws {
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Exit 0 runs the whole workload; ContractDocsDemoTests does that already.
        for (code, arguments) in Self.demoCases where code != 0 {
            let (_, stderr, status) = try CLIFixture.runBinary(arguments, in: directory)
            #expect(Int(status) == code, "perf-report \(arguments.joined(separator: " ")): \(stderr)")
            #expect((try Self.documentedCodes(of: "demo")).contains(code))
        }
    }

    @Test func everyKeyOfTheVerdictFileIsDocumented() throws {
        let table = KeyPathTable(try Self.article(), headings: ["## The verdict file"])
        #expect(table.unreadable.isEmpty)
        #expect(table.entries.count > 20)
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let budgets = directory.appendingPathComponent("budgets.json")
        try Data(
            #"{"version":1,"spans":[{"match":"api.*","limits":{"count":{"max":1}},"message":"keep it small"}],"hangs":{"count":{"max":0}}}"#
                .utf8
        ).write(to: budgets)
        let golden = CLIFixture.golden.path
        let errorFile = directory.appendingPathComponent("error.json")
        _ = ContractDocsCLI.run(["check", golden, "--budgets", "/nonexistent/budgets.json", "-o", errorFile.path])
        var walk = KeyPathWalk(table)
        for (name, text) in [
            ("check", ContractDocsCLI.run(["check", golden, "--budgets", budgets.path, "--format", "json"]).stdout),
            (
                "check with baseline",
                ContractDocsCLI.run([
                    "check", golden, "--budgets", budgets.path, "--baseline", golden, "--format", "json",
                ]).stdout
            ),
            ("compare", ContractDocsCLI.run(["compare", golden, golden, "--format", "json"]).stdout),
            ("error verdict", try String(contentsOf: errorFile, encoding: .utf8)),
        ] {
            walk.walk(try JSONValue.parse(Array(text.utf8)), name: name)
        }
        #expect(walk.problems.isEmpty, "\(walk.problems.joined(separator: "\n"))")
        #expect(walk.unobserved.isEmpty, "documented but in no verdict: \(walk.unobserved)")
    }
}
