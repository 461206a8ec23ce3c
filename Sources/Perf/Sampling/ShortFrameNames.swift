// Frame names as a profile writes them: the function and its argument labels, without types,
// generic clauses or return types, so a stack of 24 frames stays a few hundred bytes.

extension SymbolNames {
    /// The longest name a profile keeps for one frame.
    static let shortNameLimit = 160

    /// `static App.Store.load(id: Swift.Int) throws -> App.Row` → `static App.Store.load(id:)`;
    /// `closure #1 () -> () in App.run() -> ()` → `closure #1 in App.run()`. Specializations
    /// are peeled and a `merged` header kept, as in ``readable(_:)``.
    static func short(_ symbol: String) -> String {
        let text = readable(symbol)
        let segments = topLevelSegments(text).map(shortSegment)
        let joined = segments.joined(separator: " in ")
        return joined.count > shortNameLimit ? String(joined.prefix(shortNameLimit - 1)) + "…" : joined
    }

    /// `text` split at each ` in ` outside brackets: a private function's `(name in _0A1B…)`
    /// stays whole.
    private static func topLevelSegments(_ text: String) -> [String] {
        var segments: [String] = []
        var current = ""
        var depth = 0
        for character in text {
            if character == "(" || character == "<" { depth += 1 }
            if character == ")" || (character == ">" && current.last != "-") { depth = max(0, depth - 1) }
            current.append(character)
            if depth == 0, current.hasSuffix(" in ") {
                segments.append(String(current.dropLast(4)))
                current = ""
            }
        }
        segments.append(current)
        return segments
    }

    /// One function of a nested name: a closure keeps its number, a function its labels.
    private static func shortSegment(_ segment: String) -> String {
        // Glue and async parts name the function they wrap after a phrase of their own.
        for phrase in [
            " partial function for ", "forwarder for ", "partial apply for ", "thunk for ", "witness for ",
            "dispatch thunk of ", "merged ",
        ] {
            if let range = segment.range(of: phrase) {
                return String(segment[..<range.upperBound]) + shortSegment(String(segment[range.upperBound...]))
            }
        }
        if segment.hasPrefix("closure #") || segment.hasPrefix("implicit closure #") {
            let words = segment.split(separator: " ", maxSplits: 2)
            return words.prefix(segment.hasPrefix("implicit") ? 3 : 2).joined(separator: " ")
        }
        var name = ""
        var depth = 0
        var labels: [String] = []
        var current = ""
        var sawList = false
        var angle = 0
        var previous: Character = " "
        for character in segment {
            if sawList && depth == 0 { break }
            switch character {
            case "<" where depth == 0:
                angle += 1
            case ">" where depth == 0 && angle > 0 && previous != "-":
                angle -= 1
            case "(":
                if angle == 0 {
                    depth += 1
                    if depth == 1 {
                        sawList = true
                        current = ""
                        previous = character
                        continue
                    }
                }
            case ")":
                if angle == 0 {
                    depth -= 1
                    if depth == 0 {
                        if !current.trimmingSpaces.isEmpty { labels.append(label(current)) }
                        previous = character
                        continue
                    }
                }
            case "," where depth == 1 && angle == 0:
                labels.append(label(current))
                current = ""
                previous = character
                continue
            default:
                break
            }
            if depth == 0 && angle == 0 && character != ">" {
                name.append(character)
            } else if depth >= 1 {
                current.append(character)
            }
            previous = character
        }
        guard sawList else { return segment }
        return name.trimmingSpaces + "(" + labels.joined() + ")"
    }

    /// `id: Swift.Int` → `id:`; an unlabelled `Swift.Int` → `_:`.
    private static func label(_ parameter: String) -> String {
        let trimmed = parameter.trimmingSpaces
        guard let colon = trimmed.firstIndex(of: ":"),
            trimmed[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
        else { return "_:" }
        return String(trimmed[..<colon]) + ":"
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        var text = Substring(self)
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return String(text)
    }
}
