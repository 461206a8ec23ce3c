// Parsing a subcommand's arguments against its CommandSpec: flags, options that take a value
// (`--opt value` or `--opt=value`), repeatable options, positionals, `--` and `-h/--help`.

extension CommandSpec {
    /// A parsed command line. Lookups name the option by its long name and must match how the
    /// spec declares it (a flag read as a value is a programming error and traps).
    struct Parsed: Sendable, Equatable {
        /// Positional arguments, in order.
        fileprivate(set) var positionals: [String] = []
        /// `-h` or `--help` was given.
        fileprivate(set) var wantsHelp = false
        fileprivate var singles: [String: String] = [:]
        fileprivate var repeated: [String: [String]] = [:]
        fileprivate var flags: Set<String> = []
        fileprivate let kinds: [String: Option.Kind]

        fileprivate init(_ spec: CommandSpec) {
            kinds = Dictionary(spec.options.map { ($0.long, $0.kind) }, uniquingKeysWith: { first, _ in first })
        }

        /// The value of a single-value option; nil when it was not given.
        func value(_ long: String) -> String? {
            guard case .single = kinds[long] else { preconditionFailure("'--\(long)' is not a value option") }
            return singles[long]
        }

        /// The value of a single-value option with `choices`, as the enum those choices spell.
        func value<Choice: RawRepresentable>(_ long: String, as _: Choice.Type) -> Choice?
        where Choice.RawValue == String {
            guard let text = value(long) else { return nil }
            guard let choice = Choice(rawValue: text) else {
                preconditionFailure("'--\(long)' accepted '\(text)', which \(Choice.self) does not spell")
            }
            return choice
        }

        /// Every value of a repeatable option, in command-line order.
        func values(_ long: String) -> [String] {
            guard case .repeatable = kinds[long] else { preconditionFailure("'--\(long)' is not repeatable") }
            return repeated[long] ?? []
        }

        /// Whether a flag was given.
        func flag(_ long: String) -> Bool {
            guard kinds[long] == .flag else { preconditionFailure("'--\(long)' is not a flag") }
            return flags.contains(long)
        }
    }

    /// Parses `arguments` (those after the subcommand's name).
    ///
    /// The first problem is the error, but parsing goes on past it, so the error still carries
    /// every option that could be read (`check -o verdict.json` writes its error verdict there).
    /// `-h`/`--help` anywhere wins over any problem.
    func parse(_ arguments: [String]) -> Result<Parsed, UsageError> {
        var parsed = Parsed(self)
        var problem: UsageError.Problem?
        func report(_ found: UsageError.Problem) { problem = problem ?? found }
        var index = 0
        var positionalOnly = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if positionalOnly || !argument.hasPrefix("-") || argument == "-" {
                parsed.positionals.append(argument)
                continue
            }
            if argument == "--" {
                positionalOnly = true
                continue
            }
            if argument == "-h" || argument == "--help" {
                parsed.wantsHelp = true
                continue
            }
            let (name, inlineValue) = Self.split(argument)
            guard let option = option(named: name) else {
                report(.unknownOption(name))
                continue
            }
            guard let valueName = option.valueName else {
                if inlineValue != nil {
                    report(.flagWithValue(name))
                } else if !parsed.flags.insert(option.long).inserted {
                    report(.repeated(name))
                }
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else if index < arguments.count, !namesAnOption(arguments[index]) {
                value = arguments[index]
                index += 1
            } else {
                report(.missingValue(name, valueName: valueName))
                continue
            }
            if let choices = option.choices, !choices.contains(value) {
                report(.badValue(name, value: value, expected: choiceList(choices)))
                continue
            }
            if case .repeatable = option.kind {
                parsed.repeated[option.long, default: []].append(value)
            } else if parsed.singles[option.long] == nil {
                parsed.singles[option.long] = value
            } else {
                report(.repeated(name))
            }
        }
        if parsed.wantsHelp { return .success(parsed) }
        if parsed.positionals.count > self.arguments.count {
            report(.unexpectedArgument(parsed.positionals[self.arguments.count]))
        } else if parsed.positionals.count < self.arguments.count {
            report(.missingArgument(self.arguments[parsed.positionals.count].name))
        }
        for option in options where option.isRequired && parsed.singles[option.long] == nil {
            report(.missingOption(option.longLabel, choices: option.choices.map(choiceList)))
        }
        if let problem { return .failure(UsageError(problem, partial: parsed)) }
        return .success(parsed)
    }

    /// `--name=value` as (`--name`, `value`); anything else as (itself, nil).
    private static func split(_ argument: String) -> (String, String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }

    /// Whether `argument` is an option of this command (or help, or `--`) rather than a value:
    /// `--dir --cap 5` lacks the directory; `--cap -5` is a (bad) number.
    private func namesAnOption(_ argument: String) -> Bool {
        let name = Self.split(argument).0
        return name == "--" || name == "-h" || name == "--help" || option(named: name) != nil
    }
}

/// A usage error: printed as `Error: <message>` followed by the usage, exit status 2.
struct UsageError: Error, Sendable, Equatable {
    /// What is wrong with the command line.
    enum Problem: Sendable, Equatable {
        /// `--bogus`: no such option.
        case unknownOption(String)
        /// `--dir` at the end, or followed by another option.
        case missingValue(String, valueName: String)
        /// A flag or single-value option given twice.
        case repeated(String)
        /// `--allow-debug=yes`: a flag takes no value.
        case flagWithValue(String)
        /// A value outside the option's choices, or one the command cannot use.
        case badValue(String, value: String, expected: String)
        /// More positional arguments than the command takes.
        case unexpectedArgument(String)
        /// Fewer positional arguments than the command takes.
        case missingArgument(String)
        /// A required option is absent: its label, and its choices when it has some.
        case missingOption(String, choices: String?)
        /// Anything else a command finds wrong with its arguments, in words.
        case other(String)
    }

    var problem: Problem
    /// Whatever could be parsed despite the problem.
    var partial: CommandSpec.Parsed?

    init(_ problem: Problem, partial: CommandSpec.Parsed? = nil) {
        self.problem = problem
        self.partial = partial
    }

    /// The message, without the `Error: ` prefix.
    var message: String {
        switch problem {
        case .unknownOption(let name): return "unknown option '\(name)'"
        case .missingValue(let name, let valueName): return "missing value for '\(name) <\(valueName)>'"
        case .repeated(let name): return "'\(name)' given more than once"
        case .flagWithValue(let name): return "'\(name)' is a flag and takes no value"
        case .badValue(let name, let value, let expected): return "'\(name)' must be \(expected), not '\(value)'"
        case .unexpectedArgument(let argument): return "unexpected argument '\(argument)'"
        case .missingArgument(let name): return "missing expected argument '<\(name)>'"
        case .missingOption(let label, let choices): return "missing '\(label)'" + (choices.map { " (\($0))" } ?? "")
        case .other(let message): return message
        }
    }
}
