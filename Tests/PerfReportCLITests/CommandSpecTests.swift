// The parser on its own: flags, `--opt value` and `--opt=value`, repeatable options in order,
// `--`, required options and choices, every usage error by its typed problem and its message,
// and the help generated from the same declarations.
import Testing

@testable import PerfReportCLI

@Suite struct CommandSpecTests {
    enum Colour: String, CaseIterable { case red, green }

    /// A spec with one of everything.
    static let spec = CommandSpec(
        name: "paint", overview: "Paint things.",
        arguments: [.init(name: "canvas", help: "The canvas.")],
        options: [
            .value("dir", valueName: "dir", help: "A directory."),
            .value("output", short: "o", valueName: "file", help: "Where to write."),
            .value("colour", valueName: "colour", choices: Colour.allCases.map(\.rawValue), help: "The colour."),
            .value("brush", valueName: "brush", required: true, help: "The brush."),
            .repeatable("layer", valueName: "file", help: "A layer to add."),
            .flag("dry-run", help: "Do nothing."),
            .flag("verbose", short: "v", help: "Say more."),
        ],
        exitCodes: [(.success, "painted"), (.usage, "usage error")])

    private func parse(_ arguments: [String]) -> Result<CommandSpec.Parsed, UsageError> {
        Self.spec.parse(arguments)
    }

    private func parsed(_ arguments: [String]) throws -> CommandSpec.Parsed {
        try parse(arguments).get()
    }

    private func problem(_ arguments: [String]) -> UsageError.Problem? {
        guard case .failure(let error) = parse(arguments) else { return nil }
        return error.problem
    }

    @Test func flagsAreTrueOnlyWhenGiven() throws {
        let plain = try parsed(["c", "--brush", "b"])
        #expect(!plain.flag("dry-run") && !plain.flag("verbose"))
        let both = try parsed(["--dry-run", "c", "-v", "--brush", "b"])
        #expect(both.flag("dry-run") && both.flag("verbose"))
        #expect(both.positionals == ["c"])
    }

    @Test func valuesParseSeparateOrInlineAndByShortName() throws {
        let separate = try parsed(["c", "--brush", "b", "--dir", "d", "-o", "out.json"])
        #expect(separate.value("dir") == "d")
        #expect(separate.value("output") == "out.json")
        let inline = try parsed(["c", "--brush=b", "--dir=a=b", "--output=", "--colour=green"])
        #expect(inline.value("brush") == "b")
        #expect(inline.value("dir") == "a=b", "only the first '=' splits")
        #expect(inline.value("output") == "", "an empty inline value is a value")
        #expect(inline.value("colour", as: Colour.self) == .green)
        #expect(inline.value("colour") == "green")
        #expect(try parsed(["c", "--brush", "b"]).value("dir") == nil)
        #expect(try parsed(["c", "--brush", "b"]).value("colour", as: Colour.self) == nil)
    }

    @Test func repeatableOptionsKeepTheirOrder() throws {
        let result = try parsed(["--layer", "1", "c", "--brush", "b", "--layer=2", "--dry-run", "--layer", "1"])
        #expect(result.values("layer") == ["1", "2", "1"])
        #expect(try parsed(["c", "--brush", "b"]).values("layer").isEmpty)
    }

    @Test func aValueMayStartWithADashButNotNameAnOption() throws {
        #expect(try parsed(["c", "--brush", "-5"]).value("brush") == "-5")
        #expect(problem(["c", "--dir", "--brush", "b"]) == .missingValue("--dir", valueName: "dir"))
        #expect(problem(["c", "--brush", "b", "--dir", "--help"]) == nil, "help wins")
        #expect(problem(["c", "--brush", "b", "--dir", "-v"]) == .missingValue("--dir", valueName: "dir"))
        #expect(problem(["c", "--brush", "b", "-o"]) == .missingValue("-o", valueName: "file"))
        #expect(problem(["c", "--brush", "b", "--layer"]) == .missingValue("--layer", valueName: "file"))
    }

    @Test func everythingAfterADoubleDashIsPositional() throws {
        let result = try parsed(["--brush", "b", "--", "--dry-run"])
        #expect(result.positionals == ["--dry-run"])
        #expect(!result.flag("dry-run"))
        #expect(try parsed(["-", "--brush", "b"]).positionals == ["-"], "'-' is an argument (stdin)")
    }

    @Test(arguments: [
        (["c", "--brush", "b", "--bogus"], UsageError.Problem.unknownOption("--bogus")),
        (["c", "--brush", "b", "--bogus=1"], .unknownOption("--bogus")),
        (["c", "--brush", "b", "-x"], .unknownOption("-x")),
        (["c", "--brush", "b", "--dir"], .missingValue("--dir", valueName: "dir")),
        (["c", "--brush", "b", "--dir", "1", "--dir", "2"], .repeated("--dir")),
        (["c", "--brush", "b", "-o", "1", "--output", "2"], .repeated("--output")),
        (["c", "--brush", "b", "--dry-run", "--dry-run"], .repeated("--dry-run")),
        (["c", "--brush", "b", "--dry-run=yes"], .flagWithValue("--dry-run")),
        (["c", "--brush", "b", "--colour", "blue"], .badValue("--colour", value: "blue", expected: "red or green")),
        (["c", "d", "--brush", "b"], .unexpectedArgument("d")),
        (["--brush", "b"], .missingArgument("canvas")),
        (["c"], .missingOption("--brush <brush>", choices: nil)),
    ])
    func everyUsageErrorNamesItsProblem(arguments: [String], expected: UsageError.Problem) {
        #expect(problem(arguments) == expected, "\(arguments)")
    }

    @Test(arguments: [
        (UsageError.Problem.unknownOption("--bogus"), "unknown option '--bogus'"),
        (.missingValue("-o", valueName: "file"), "missing value for '-o <file>'"),
        (.repeated("--dir"), "'--dir' given more than once"),
        (.flagWithValue("--dry-run"), "'--dry-run' is a flag and takes no value"),
        (.badValue("--colour", value: "blue", expected: "red or green"), "'--colour' must be red or green, not 'blue'"),
        (.unexpectedArgument("d"), "unexpected argument 'd'"),
        (.missingArgument("canvas"), "missing expected argument '<canvas>'"),
        (.missingOption("--format <format>", choices: "a or b"), "missing '--format <format>' (a or b)"),
        (.missingOption("--brush <brush>", choices: nil), "missing '--brush <brush>'"),
        (.other("anything"), "anything"),
    ])
    func messages(problem: UsageError.Problem, message: String) {
        #expect(UsageError(problem).message == message)
    }

    @Test func theFirstProblemIsReportedButParsingGoesOn() throws {
        let error = try #require(
            { () -> UsageError? in
                guard case .failure(let error) = parse(["--bogus", "c", "--dir", "--layer", "x", "-o", "v.json"])
                else { return nil }
                return error
            }())
        #expect(error.problem == .unknownOption("--bogus"))
        #expect(error.partial?.value("output") == "v.json", "the -o after the error is still read")
        #expect(error.partial?.values("layer") == ["x"])
        #expect(error.partial?.value("dir") == nil)
    }

    @Test func helpWinsOverAnyProblem() throws {
        for arguments in [["--help"], ["--bogus", "-h"], ["a", "b", "c", "--help"], ["--dir", "-h"]] {
            #expect(try parsed(arguments).wantsHelp, "\(arguments)")
        }
        #expect(try !parsed(["c", "--brush", "b"]).wantsHelp)
        #expect(try parsed(["--brush", "b", "--", "--help"]).positionals == ["--help"])
    }

    @Test func helpListsEveryOptionWithItsNature() {
        let help = Self.spec.help
        #expect(
            help
                == """
                OVERVIEW: Paint things.

                USAGE: paint-usage

                ARGUMENTS:
                  <canvas>                The canvas.

                OPTIONS:
                  --dir <dir>             A directory.
                  -o, --output <file>     Where to write.
                  --colour <colour>       The colour.
                  --brush <brush>         The brush (required).
                  --layer <file>          A layer to add (repeatable).
                  --dry-run               Do nothing.
                  -v, --verbose           Say more.
                  -h, --help              Show help information.

                EXIT CODES:
                  0  painted
                  2  usage error

                """.replacingOccurrences(of: "paint-usage", with: Self.spec.usage))
        #expect(
            Self.spec.usage
                == "perf-report paint <canvas> [--dir <dir>] [-o <file>] [--colour <colour>] --brush <brush> "
                + "[--layer <file> ...] [--dry-run] [-v]")
    }

    /// Every real subcommand: each declared option is in its usage line and its help, a flag
    /// without a value name, a repeatable one marked so, and none is unknown to its own parser.
    @Test(arguments: PerfReportCommand.Subcommand.allCases)
    func everySubcommandDocumentsEveryOption(subcommand: PerfReportCommand.Subcommand) {
        let spec = subcommand.spec
        let help = PerfReportCommand.run([subcommand.rawValue, "--help"]).stdout
        #expect(help == spec.help)
        #expect(PerfReportCommand.overview.contains("  \(subcommand.rawValue) "))
        for option in spec.options {
            #expect(spec.usage.contains(option.usageLabel), "\(option.long)")
            let line = help.split(separator: "\n").first { $0.hasPrefix("  " + option.helpLabel) }
            #expect(line != nil, "\(subcommand) --help lacks \(option.helpLabel)")
            switch option.kind {
            case .flag: #expect(!option.helpLabel.contains("<"))
            case .single: #expect(option.helpLabel.hasSuffix(">"))
            case .repeatable:
                #expect(help.contains("(repeatable)") && spec.usage.contains(option.usageLabel + "]"))
                #expect(option.usageLabel.hasSuffix("..."))
            }
            let unknown = PerfReportCommand.run([subcommand.rawValue, "--" + option.long + "x"], environment: [:]) {
                _ in
            }
            #expect(unknown.status == .usage)
            #expect(unknown.stderr.hasPrefix("Error: unknown option '--\(option.long)x'"))
        }
        let names = spec.options.map(\.long) + spec.options.compactMap(\.short)
        #expect(Set(names).count == names.count, "\(subcommand) declares a name twice")
    }
}

/// Reading an option as something the spec does not declare it to be is a programming error:
/// it traps rather than quietly answering "not given".
@Suite struct CommandSpecMisuseTests {
    @Test func readingAFlagAsAValueTraps() async {
        await #expect(processExitsWith: .failure) {
            let parsed = try CommandSpecTests.spec.parse(["c", "--brush", "b"]).get()
            _ = parsed.value("dry-run")
        }
    }

    @Test func readingAnUndeclaredFlagTraps() async {
        await #expect(processExitsWith: .failure) {
            let parsed = try CommandSpecTests.spec.parse(["c", "--brush", "b"]).get()
            _ = parsed.flag("dry-rn")
        }
    }
}
