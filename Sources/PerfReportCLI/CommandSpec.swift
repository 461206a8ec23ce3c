// A subcommand's declared arguments and options: parsing them and printing their help in
// swift-argument-parser's layout (OVERVIEW / USAGE / ARGUMENTS / OPTIONS).

/// The arguments and options one subcommand accepts.
struct CommandSpec: Sendable {
    /// An option that takes a value, e.g. `-o, --output <file>`.
    struct Option: Sendable {
        var short: String?
        var long: String
        var valueName: String
        var help: String
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
    var exitCodes: [(Int32, String)]

    /// `perf-report build [--dir <dir>] [-o <file>]`
    var usage: String {
        var parts = ["perf-report", name]
        parts += arguments.map { "<\($0.name)>" }
        parts += options.map { option in
            "[\(option.short.map { "-" + $0 } ?? "--" + option.long) <\(option.valueName)>]"
        }
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
        for option in options {
            let label = (option.short.map { "-\($0), " } ?? "") + "--\(option.long) <\(option.valueName)>"
            text += Self.helpLine(label, option.help)
        }
        text += Self.helpLine("-h, --help", "Show help information.")
        text += "\nEXIT CODES:\n"
        for (code, meaning) in exitCodes { text += "  \(code)  \(meaning)\n" }
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

    /// Parsed command line: option values by long name, positionals in order.
    struct Parsed: Sendable {
        var values: [String: String] = [:]
        var positionals: [String] = []
        var wantsHelp = false
    }

    /// Parses `arguments` (after the subcommand's name).
    ///
    /// - Returns: The parsed values, or a usage error message (without the `Error: ` prefix).
    func parse(_ arguments: [String]) -> Result<Parsed, UsageError> {
        var parsed = Parsed()
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "-h" || argument == "--help" {
                parsed.wantsHelp = true
                continue
            }
            guard argument.hasPrefix("-"), argument != "-" else {
                parsed.positionals.append(argument)
                continue
            }
            var flag = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                flag = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            guard let option = options.first(where: { "--" + $0.long == flag || $0.short.map { "-" + $0 } == flag })
            else {
                return .failure(UsageError("unknown option '\(flag)'"))
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else {
                guard index < arguments.count else {
                    return .failure(UsageError("missing value for '\(flag) <\(option.valueName)>'"))
                }
                value = arguments[index]
                index += 1
            }
            guard parsed.values[option.long] == nil else {
                return .failure(UsageError("'\(flag)' given more than once"))
            }
            parsed.values[option.long] = value
        }
        if parsed.wantsHelp { return .success(parsed) }
        if parsed.positionals.count > self.arguments.count {
            return .failure(UsageError("unexpected argument '\(parsed.positionals[self.arguments.count])'"))
        }
        if parsed.positionals.count < self.arguments.count {
            return .failure(
                UsageError("missing expected argument '<\(self.arguments[parsed.positionals.count].name)>'"))
        }
        return .success(parsed)
    }
}

/// A usage error: printed as `Error: <message>` followed by the usage, exit status 2.
struct UsageError: Error, Sendable {
    var message: String
    init(_ message: String) { self.message = message }
}
