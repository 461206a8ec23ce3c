// Reads the contract articles of the DocC catalogs (Sources/*/*.docc) so tests can hold the code
// to them: Markdown tables whose first column is a key in backticks, JSON values, and a walker
// that compares a JSON document with a table of key paths.
import Foundation

/// One article of a DocC catalog, as text.
struct ContractArticle {
    let name: String
    let text: String

    /// The package's `Sources` folder, found from this file.
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Sources").standardizedFileURL

    /// `Sources/<module>/<module>.docc/<name>.md`.
    init(module: String, _ name: String) throws {
        let url = Self.sources.appendingPathComponent("\(module)/\(module).docc/\(name).md")
        self.name = "\(module).docc/\(name).md"
        self.text = try String(contentsOf: url, encoding: .utf8)
    }

    /// The lines between the heading `heading` (e.g. `## Keys`) and the next heading of any level.
    func section(_ heading: String) -> [Substring] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == heading }) else {
            return []
        }
        var body: [Substring] = []
        var inCode = false
        for line in lines[(start + 1)...] {
            if line.hasPrefix("```") { inCode.toggle() }
            if !inCode, line.hasPrefix("#") { break }
            body.append(line)
        }
        return body
    }

    /// The rows of the first table under `heading` whose first cell is a key in backticks: the key,
    /// then the other cells, trimmed. The header row and separator are skipped.
    func table(under heading: String) -> [(key: String, cells: [String])] {
        var rows: [(String, [String])] = []
        var seenTable = false
        for line in section(heading) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("|") else {
                if seenTable { break }
                continue
            }
            seenTable = true
            var cells = trimmed.dropFirst().split(separator: "|", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            if cells.last == "" { cells.removeLast() }
            guard let first = cells.first, first.hasPrefix("`"),
                let end = first.dropFirst().firstIndex(of: "`")
            else { continue }
            rows.append((String(first[first.index(after: first.startIndex)..<end]), Array(cells.dropFirst())))
        }
        return rows
    }

    /// The first fenced code block under `heading`.
    func codeBlock(under heading: String) -> String? {
        var inCode = false
        var code: [Substring] = []
        for line in section(heading) {
            if line.hasPrefix("```") {
                if inCode { return code.joined(separator: "\n") }
                inCode = true
                continue
            }
            if inCode { code.append(line) }
        }
        return nil
    }

    /// The words in backticks of a cell.
    static func backticked(_ cell: String) -> [String] {
        cell.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }
}

/// A JSON value that keeps what JSONSerialization blurs: booleans apart from numbers, integers
/// apart from fractions.
indirect enum JSONValue: Decodable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    static func parse(_ bytes: some Sequence<UInt8>) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
    }

    var object: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}

/// A JSON type as the articles' type columns spell it.
enum DocumentedType: Equatable {
    case string, integer, number, boolean, object, null
    /// `array`, `array of strings`, `array of ledger lines`, `array of …` (elements unchecked).
    case array(of: String?)
    /// Any other word, e.g. `histogram`: an object whose keys are the table's `<histogram>.…` rows.
    case shape(String)

    /// `string or null` → [.string, .null]; nil for a word the convention does not define.
    static func parse(_ cell: String) -> [DocumentedType]? {
        var types: [DocumentedType] = []
        for alternative in cell.components(separatedBy: " or ") {
            let words = alternative.trimmingCharacters(in: .whitespaces)
            switch words {
            case "string": types.append(.string)
            case "integer": types.append(.integer)
            case "number": types.append(.number)
            case "boolean": types.append(.boolean)
            case "object": types.append(.object)
            case "null": types.append(.null)
            case "array": types.append(.array(of: nil))
            default:
                if words.hasPrefix("array of ") {
                    types.append(.array(of: String(words.dropFirst("array of ".count))))
                } else if !words.isEmpty, words.allSatisfy({ $0.isLetter && $0.isLowercase }) {
                    types.append(.shape(words))
                } else {
                    return nil
                }
            }
        }
        return types
    }

    func admits(_ value: JSONValue) -> Bool {
        switch (self, value) {
        case (.string, .string), (.integer, .integer), (.number, .integer), (.number, .number),
            (.boolean, .bool), (.object, .object), (.shape, .object), (.null, .null), (.array, .array):
            return true
        default:
            return false
        }
    }
}

/// A table of key paths (`a.b`, `a[].b`, `a.<name>.b`) with their types and presence.
struct KeyPathTable {
    struct Entry {
        var types: [DocumentedType]
        var always: Bool
    }

    let source: String
    var entries: [String: Entry] = [:]
    /// Rows the convention cannot read (unknown type word or presence), to fail on.
    var unreadable: [String] = []

    /// Reads the tables under `headings` of `article`: columns key path, type, presence, then
    /// anything (meaning, default).
    init(_ article: ContractArticle, headings: [String]) {
        source = article.name
        for heading in headings {
            for row in article.table(under: heading) {
                guard row.cells.count >= 2, let types = DocumentedType.parse(row.cells[0]),
                    ["always", "optional"].contains(row.cells[1])
                else {
                    unreadable.append(row.key)
                    continue
                }
                entries[row.key] = Entry(types: types, always: row.cells[1] == "always")
            }
        }
        // A shape needs rows of its own.
        for (path, entry) in entries {
            for case .shape(let name) in entry.types where !entries.keys.contains(where: { $0.hasPrefix("<\(name)>.") })
            {
                unreadable.append(path)
            }
        }
    }

    static func parent(of path: String) -> String {
        if path.hasSuffix("[]") { return String(path.dropLast(2)) }
        guard let dot = path.lastIndex(of: ".") else { return "" }
        return String(path[..<dot])
    }

    static func child(_ parent: String, _ key: String) -> String { parent.isEmpty ? key : parent + "." + key }

    static func lastSegment(_ path: String) -> String {
        guard let dot = path.lastIndex(of: ".") else { return path }
        return String(path[path.index(after: dot)...])
    }

    func children(of parent: String) -> [String] {
        entries.keys.filter { !$0.hasSuffix("[]") && Self.parent(of: $0) == parent }
    }
}

/// What walking JSON documents against a ``KeyPathTable`` found.
struct KeyPathWalk {
    let table: KeyPathTable
    /// Checks an element of an `array of ledger lines`; returns problems.
    var checkLedgerLine: (JSONValue) -> [String] = { _ in [] }
    /// Documented paths seen at least once.
    private(set) var observed: Set<String> = []
    /// Problems, each naming the concrete path.
    private(set) var problems: [String] = []

    init(_ table: KeyPathTable, checkLedgerLine: @escaping (JSONValue) -> [String] = { _ in [] }) {
        self.table = table
        self.checkLedgerLine = checkLedgerLine
    }

    /// Walks one document from its root object.
    mutating func walk(_ document: JSONValue, name: String) {
        guard case .object(let members) = document else {
            problems.append("\(name): not a JSON object")
            return
        }
        walkMembers(members, base: "", concrete: name)
    }

    /// Documented paths never seen in any document walked.
    var unobserved: [String] { table.entries.keys.filter { !observed.contains($0) }.sorted() }

    private mutating func walkMembers(_ members: [String: JSONValue], base: String, concrete: String) {
        let documented = table.children(of: base)
        for (key, value) in members.sorted(by: { $0.key < $1.key }) {
            let literal = KeyPathTable.child(base, key)
            let here = concrete + "." + key
            if table.entries[literal] != nil {
                walkValue(value, path: literal, concrete: here)
            } else if let wildcard = documented.first(where: { KeyPathTable.lastSegment($0).hasPrefix("<") }) {
                walkValue(value, path: wildcard, concrete: here)
            } else {
                problems.append("\(here): key path `\(literal)` is not documented in \(table.source)")
            }
        }
        for path in documented where table.entries[path]!.always && !KeyPathTable.lastSegment(path).hasPrefix("<") {
            if members[KeyPathTable.lastSegment(path)] == nil {
                problems.append("\(concrete): lacks `\(path)`, which \(table.source) says is always present")
            }
        }
    }

    private mutating func walkValue(_ value: JSONValue, path: String, concrete: String) {
        let entry = table.entries[path]!
        observed.insert(path)
        guard let type = entry.types.first(where: { $0.admits(value) }) else {
            problems.append("\(concrete): \(value.kind) where \(table.source) says `\(path)` is \(entry.types)")
            return
        }
        switch (type, value) {
        case (.shape(let name), .object(let members)):
            walkMembers(members, base: "<\(name)>", concrete: concrete)
        case (.object, .object(let members)):
            walkMembers(members, base: path, concrete: concrete)
        case (.array(let element), .array(let items)):
            for (index, item) in items.enumerated() {
                let here = "\(concrete)[\(index)]"
                switch element {
                case "strings"?:
                    if case .string = item { continue }
                    problems.append("\(here): \(item.kind) in an array of strings (`\(path)`)")
                case "ledger lines"?:
                    problems += checkLedgerLine(item).map { "\(here): \($0)" }
                case nil:
                    // Elements are objects when the table has `path[].key` rows; otherwise unchecked.
                    guard !table.children(of: path + "[]").isEmpty else { continue }
                    guard case .object(let members) = item else {
                        problems.append("\(here): \(item.kind) where \(table.source) documents objects (`\(path)[]`)")
                        continue
                    }
                    walkMembers(members, base: path + "[]", concrete: here)
                default:
                    continue
                }
            }
        default:
            break
        }
    }
}

extension JSONValue {
    /// The JSON type, for messages.
    var kind: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer: "integer"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

/// The ledger's documented kinds and keys (LedgerFormat.md), and the check of one line.
struct LedgerContract {
    /// Kinds of the kinds table.
    var kinds: Set<String> = []
    /// The only names of a kind, where its `name` cell starts with values in backticks.
    var names: [String: Set<String>] = [:]
    /// Keys: their types and the kinds that may carry them (nil: every line).
    var keys: [String: (types: [DocumentedType], kinds: Set<String>?)] = [:]
    var unreadable: [String] = []

    init() throws {
        let article = try ContractArticle(module: "Perf", "LedgerFormat")
        for row in article.table(under: "## Kinds") {
            kinds.insert(row.key)
            if let cell = row.cells.first, cell.hasPrefix("`") {
                names[row.key] = Set(ContractArticle.backticked(String(cell.prefix { $0 != ":" })))
            }
        }
        for row in article.table(under: "## Keys") {
            guard row.cells.count >= 2, let types = DocumentedType.parse(row.cells[0]) else {
                unreadable.append(row.key)
                continue
            }
            let every = row.cells[1] == "every"
            let listed = Set(ContractArticle.backticked(row.cells[1]))
            if !every, listed.isEmpty || !listed.isSubset(of: kinds) { unreadable.append(row.key) }
            keys[row.key] = (types, every ? nil : listed)
        }
    }

    /// Keys every line carries.
    var everyLineKeys: Set<String> { Set(keys.filter { $0.value.kinds == nil }.keys) }

    /// What is wrong with one ledger line by the article; empty when nothing is.
    func problems(_ line: JSONValue) -> [String] {
        guard case .object(let members) = line else { return ["a ledger line that is not an object"] }
        let kind = members["kind"]?.string ?? "?"
        var problems: [String] = []
        if !kinds.contains(kind) { problems.append("kind `\(kind)` is not in LedgerFormat.md's kinds table") }
        if let allowed = names[kind], let name = members["name"]?.string, !allowed.contains(name) {
            problems.append("name `\(name)` of kind `\(kind)` is not one LedgerFormat.md lists")
        }
        for (key, value) in members.sorted(by: { $0.key < $1.key }) {
            guard let documented = keys[key] else {
                problems.append("key `\(key)` (kind `\(kind)`) is not documented in LedgerFormat.md")
                continue
            }
            if let allowed = documented.kinds, !allowed.contains(kind) {
                problems.append("key `\(key)` on kind `\(kind)`, which LedgerFormat.md does not list for it")
            }
            let admitted = documented.types.contains { type in
                if case .array(of: "strings") = type, case .array(let items) = value {
                    return items.allSatisfy { if case .string = $0 { true } else { false } }
                }
                return type.admits(value)
            }
            if !admitted { problems.append("key `\(key)` is \(value.kind), not \(documented.types)") }
        }
        for key in everyLineKeys.sorted() where members[key] == nil {
            problems.append("kind `\(kind)` lacks `\(key)`, which LedgerFormat.md says every line has")
        }
        return problems
    }
}
