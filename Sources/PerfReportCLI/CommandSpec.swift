// A subcommand's declared arguments and options, and its help in swift-argument-parser's layout
// (OVERVIEW / USAGE / ARGUMENTS / OPTIONS / EXIT CODES). Parsing is in CommandSpec+Parsing.swift.

/// The arguments and options one subcommand accepts: everything its parser and its help know.
struct CommandSpec: Sendable {
    /// One option: a boolean flag, or an option that takes a value once or repeatedly.
    struct Option: Sendable {
        /// What an option takes.
        enum Kind: Sendable, Equatable {
            /// A switch with no value: given or not, e.g. `--allow-debug`.
            case flag
            /// A value, at most once, e.g. `-o <file>`.
            case single(valueName: String)
            /// A value, any number of times; the values keep their command-line order.
            case repeatable(valueName: String)
        }

        var short: String?
        var long: String
        var kind: Kind
        var help: String
        /// The only values accepted, when there is a fixed set; the parser rejects any other.
        var choices: [String]?
        /// The command cannot run without it; the parser reports its absence.
        var isRequired = false

        /// A boolean flag.
        static func flag(_ long: String, short: String? = nil, help: String) -> Option {
            Option(short: short, long: long, kind: .flag, help: help)
        }

        /// An option that takes one value, at most once.
        static func value(
            _ long: String, short: String? = nil, valueName: String, choices: [String]? = nil,
            required: Bool = false, help: String
        ) -> Option {
            Option(
                short: short, long: long, kind: .single(valueName: valueName), help: help, choices: choices,
                isRequired: required)
        }

        /// An option that may be given any number of times.
        static func repeatable(_ long: String, short: String? = nil, valueName: String, help: String) -> Option {
            Option(short: short, long: long, kind: .repeatable(valueName: valueName), help: help)
        }

        /// `file` for `<file>`; nil for a flag.
        var valueName: String? {
            switch kind {
            case .flag: return nil
            case .single(let name), .repeatable(let name): return name
            }
        }

        /// `--output <file>`, `--allow-debug`: how error messages name it.
        var longLabel: String { "--" + long + (valueName.map { " <\($0)>" } ?? "") }

        /// `-o <file>`, `--allow-debug`, `--current <report> ...`: the usage line's spelling.
        var usageLabel: String {
            let name = short.map { "-" + $0 } ?? "--" + long
            switch kind {
            case .flag: return name
            case .single(let value): return "\(name) <\(value)>"
            case .repeatable(let value): return "\(name) <\(value)> ..."
            }
        }

        /// `-o, --output <file>`, `--allow-debug`: the OPTIONS list's spelling (as argument-parser
        /// does, a repeatable option says so in its help text, not its label).
        var helpLabel: String { (short.map { "-\($0), " } ?? "") + longLabel }

        /// The help text with what the label cannot show: required, repeatable.
        var helpText: String {
            var notes: [String] = []
            if isRequired { notes.append("required") }
            if case .repeatable = kind { notes.append("repeatable") }
            guard !notes.isEmpty else { return help }
            let sentence = help.hasSuffix(".") ? String(help.dropLast()) : help
            return sentence + " (" + notes.joined(separator: ", ") + ")" + (help.hasSuffix(".") ? "." : "")
        }

        /// Whether `argument` names this option (`--long` or `-s`).
        func isNamed(_ argument: String) -> Bool {
            argument == "--" + long || short.map { "-" + $0 } == argument
        }
    }

    /// A positional argument, e.g. `<report>`.
    struct Argument: Sendable {
        var name: String
        var help: String
    }

    var name: String
    var overview: String
    var arguments: [Argument] = []
    var options: [Option] = []
    var exitCodes: [(ExitCode, String)]

    /// `perf-report check <report> --budgets <file> [--current <report> ...] [--allow-debug]`
    var usage: String {
        var parts = ["perf-report", name]
        parts += arguments.map { "<\($0.name)>" }
        parts += options.map { $0.isRequired ? $0.usageLabel : "[\($0.usageLabel)]" }
        return parts.joined(separator: " ")
    }

    var help: String {
        var text = "OVERVIEW: \(overview)\n\nUSAGE: \(usage)\n\n"
        if !arguments.isEmpty {
            text += "ARGUMENTS:\n"
            for argument in arguments { text += Self.helpLine("<\(argument.name)>", argument.help) }
            text += "\n"
        }
        text += "OPTIONS:\n"
        for option in options { text += Self.helpLine(option.helpLabel, option.helpText) }
        text += Self.helpLine("-h, --help", "Show help information.")
        text += "\nEXIT CODES:\n"
        for (code, meaning) in exitCodes { text += "  \(code.rawValue)  \(meaning)\n" }
        return text
    }

    /// `  label<padding>help`, help starting at column 26 as argument-parser prints it; a long
    /// label puts the help on the next line.
    static func helpLine(_ label: String, _ help: String) -> String {
        let indent = String(repeating: " ", count: 26)
        if label.count <= 22 {
            return "  " + label + String(repeating: " ", count: 24 - label.count) + help + "\n"
        }
        return "  " + label + "\n" + indent + help + "\n"
    }

    /// The declared option `argument` names, if any.
    func option(named argument: String) -> Option? {
        options.first { $0.isNamed(argument) }
    }
}

/// `a`, `a or b`, `a, b or c`: a list of choices in an error or help message.
func choiceList(_ items: [String]) -> String {
    guard let last = items.last else { return "" }
    return items.count == 1 ? last : items.dropLast().joined(separator: ", ") + " or " + last
}
