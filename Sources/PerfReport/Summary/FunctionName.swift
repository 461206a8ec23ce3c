// Culprits as a person would write them: a demangled symbol without the compiler's noise
// (specialization headers, `static`, the signature after the argument list), and a mark for a
// merged function or a thunk. Used where a culprit is a column or a caption; stacks keep the raw
// symbols.
import Perf

/// The readable form of a demangled function symbol.
///
/// ```swift
/// FunctionName.readable(
///     "function signature specialization <Arg[0] = Dead> of static App.Feed.parse() -> ()")
/// // "App.Feed.parse()"
/// ```
public enum FunctionName {
    /// Argument lists longer than this many characters are shortened to their labels,
    /// `parse(data:options:)`.
    public static let maximumArgumentListLength = 40

    /// Compiler glue named by the types it converts or copies, not by a function.
    private static let typeOnlyGlue = ["reabstraction thunk", "thunk for ", "outlined ", "key path "]

    /// Headers peeled from the front, any number of times, in any order. Those ending in `<` are
    /// followed by a bracketed list and ` of `.
    private static let bracketedPrefixes = [
        "function signature specialization <", "generic specialization <", "generic partial specialization <",
    ]
    private static let plainPrefixes = [
        "specialized ", "merged ", "static ", "partial apply forwarder for ", "partial apply for ", "@objc ",
        "protocol witness for ", "dispatch thunk of ", "@nonobjc ", "@Sendable ",
    ]

    /// `symbol` without compiler noise; a symbol that is not a demangled Swift function (a C
    /// function, an address) comes back unchanged.
    ///
    /// A merged function is marked `(merged)`, as functions with identical bodies share it and the
    /// one named may not be the one that ran: `merged App.load() -> ()` → `App.load() (merged)`.
    /// Compiler glue, blamed only when no other frame of the program was on the stack, is marked
    /// `(thunk)`: `partial apply for closure #1 () -> () in App.run() -> ()` →
    /// `closure #1 in App.run() (thunk)`.
    public static func readable(_ symbol: String) -> String {
        let name = function(symbol)
        guard let mark = SymbolNames.mark(symbol) else { return name }
        return "\(name) (\(mark.rawValue))"
    }

    /// The function `symbol` names, without a mark.
    private static func function(_ symbol: String) -> String {
        var text = Substring(symbol)
        peel(&text)
        // `reabstraction thunk helper from @escaping … to …`: glue that names only types has no
        // argument list to shorten, and its types are all it says.
        if typeOnlyGlue.contains(where: { text.hasPrefix($0) }) { return String(text) }
        // `protocol witness for A.P.f() -> () in conformance A.S : A.P in A`: the requirement.
        if let conformance = range(of: " in conformance ", in: text) { text = text[..<conformance.lowerBound] }
        // `closure #1 (Swift.Int) -> () in App.f() -> ()`: the closure's own type says nothing.
        for closure in ["closure #", "implicit closure #"] where text.hasPrefix(closure) {
            guard let inRange = range(of: " in ", in: text) else { break }
            let number = text.dropFirst(closure.count).prefix { $0.isNumber }
            return closure + String(number) + " in " + function(String(text[inRange.upperBound...]))
        }
        // `(extension in Foundation):Swift.String.f()`: the module that extends.
        if text.hasPrefix("(extension in "), let colon = text.firstIndex(of: ":") {
            text = text[text.index(after: colon)...]
            peel(&text)
        }
        return signature(text)
    }

    /// Removes the leading headers, nested ones included.
    private static func peel(_ text: inout Substring) {
        var changed = true
        while changed {
            changed = false
            for prefix in plainPrefixes where text.hasPrefix(prefix) {
                text = text.dropFirst(prefix.count)
                changed = true
            }
            for prefix in bracketedPrefixes where text.hasPrefix(prefix) {
                let open = text.index(text.startIndex, offsetBy: prefix.count - 1)
                guard let close = closing(text, from: open), text[close...].hasPrefix("> of ") else { continue }
                text = text[text.index(close, offsetBy: 5)...]
                changed = true
            }
        }
    }

    /// The name and argument list, without what follows them (`-> ()`, `throws -> T`, an
    /// accessor's ` : Type`); a long argument list becomes its labels.
    private static func signature(_ text: Substring) -> String {
        // An accessor, `App.Store.items.getter : [App.Item]`, has no argument list.
        if let colon = range(of: " : ", in: text), firstTopLevel("(", in: text).map({ $0 > colon.lowerBound }) ?? true {
            return String(text[..<colon.lowerBound])
        }
        guard let open = firstTopLevel("(", in: text), let close = closing(text, from: open) else {
            return String(text)
        }
        let name = text[..<open]
        let arguments = text[text.index(after: open)..<close]
        guard arguments.count > maximumArgumentListLength else { return String(text[...close]) }
        let labels = split(arguments).map { argument -> String in
            // `data: Foundation.Data` is labelled; `Foundation.Data` is not.
            guard let colon = range(of: ": ", in: argument),
                argument[..<colon.lowerBound].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
            else { return "_:" }
            return String(argument[..<colon.lowerBound]) + ":"
        }
        return String(name) + "(" + labels.joined() + ")"
    }

    /// The top-level comma-separated parts of an argument list.
    private static func split(_ arguments: Substring) -> [Substring] {
        var parts: [Substring] = []
        var depth = 0
        var start = arguments.startIndex
        var previous: Character = " "
        for index in arguments.indices {
            switch arguments[index] {
            case "(", "[", "<": depth += 1
            case ")", "]": depth -= 1
            case ">" where previous != "-": depth -= 1
            case "," where depth == 0:
                parts.append(arguments[start..<index])
                start = arguments.index(after: index)
            default: break
            }
            previous = arguments[index]
        }
        parts.append(arguments[start...])
        return parts.map { $0.drop { $0 == " " } }
    }

    /// The first `character` outside brackets.
    private static func firstTopLevel(_ character: Character, in text: Substring) -> Substring.Index? {
        var depth = 0
        var previous: Character = " "
        for index in text.indices {
            let current = text[index]
            if current == character, depth == 0 { return index }
            switch current {
            case "(", "[", "<": depth += 1
            case ")", "]": depth -= 1
            case ">" where previous != "-": depth -= 1
            default: break
            }
            previous = current
        }
        return nil
    }

    /// The bracket that closes the one at `open` (`<` or `(`); `->` closes nothing.
    private static func closing(_ text: Substring, from open: Substring.Index) -> Substring.Index? {
        var depth = 0
        var previous: Character = " "
        var index = open
        while index < text.endIndex {
            switch text[index] {
            case "<", "(", "[": depth += 1
            case ")", "]":
                depth -= 1
                if depth == 0 { return index }
            case ">" where previous != "-":
                depth -= 1
                if depth == 0 { return index }
            default: break
            }
            previous = text[index]
            index = text.index(after: index)
        }
        return nil
    }

    /// The first occurrence of `needle` outside brackets.
    private static func range(of needle: String, in text: Substring) -> Range<Substring.Index>? {
        var depth = 0
        var previous: Character = " "
        var index = text.startIndex
        while index < text.endIndex {
            if depth == 0, text[index...].hasPrefix(needle) {
                return index..<text.index(index, offsetBy: needle.count)
            }
            switch text[index] {
            case "(", "[", "<": depth += 1
            case ")", "]": depth -= 1
            case ">" where previous != "-": depth -= 1
            default: break
            }
            previous = text[index]
            index = text.index(after: index)
        }
        return nil
    }
}
