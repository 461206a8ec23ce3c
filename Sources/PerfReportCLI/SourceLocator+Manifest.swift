// The targets of a Package.swift read as text, not run: each `.target(`, `.executableTarget(`,
// `.testTarget(`… call with a literal `name:` and, when it has one, a literal `path:`. Comments
// and string literals are skipped whole, and labels count only at the call's own level, so a
// dependency written `.target(name: "Util")` inside another target keeps no path of that one.
// What is computed (a name or path built from variables) is simply not seen.

extension SourceLocator {
    /// A target the manifest declares; `path` nil for the default folder.
    struct ManifestTarget: Equatable, Sendable {
        var name: String
        var path: String?
    }

    /// The calls that declare (or, in a dependency list, name) a target.
    static let targetCalls: Set<String> = [
        "target", "executableTarget", "testTarget", "systemLibrary", "binaryTarget", "macro", "plugin",
    ]

    /// The manifest's target calls in the order they close (a call nested in another's arguments
    /// first); a name that is not a plain string literal drops the call.
    static func manifestTargets(_ text: String) -> [ManifestTarget] {
        let tokens = ManifestToken.scan(Array(text.utf8))
        var targets: [ManifestTarget] = []
        // Open target calls: the depth of their arguments and the labels seen at it.
        var calls: [(depth: Int, name: String?, path: String?)] = []
        var depth = 0
        for (index, token) in tokens.enumerated() {
            switch token {
            case .open(let bracket):
                if bracket == UInt8(ascii: "("), index >= 2, case .word(let call) = tokens[index - 1],
                    targetCalls.contains(call), tokens[index - 2] == .punctuation(UInt8(ascii: "."))
                {
                    calls.append((depth + 1, nil, nil))
                }
                depth += 1
            case .close:
                depth = max(0, depth - 1)
                while let call = calls.last, call.depth > depth {
                    calls.removeLast()
                    if let name = call.name { targets.append(ManifestTarget(name: name, path: call.path)) }
                }
            case .word(let label) where label == "name" || label == "path":
                guard let call = calls.last, call.depth == depth, index + 2 < tokens.count,
                    tokens[index + 1] == .punctuation(UInt8(ascii: ":")), case .string(let value?) = tokens[index + 2]
                else { continue }
                if label == "name" { calls[calls.count - 1].name = value } else { calls[calls.count - 1].path = value }
            default:
                continue
            }
        }
        return targets
    }
}

/// A token of Swift source, as much of it as reading a manifest needs.
enum ManifestToken: Equatable {
    case word(String)
    /// A string literal; nil for one with interpolation, escapes or several lines.
    case string(String?)
    case open(UInt8)
    case close(UInt8)
    case punctuation(UInt8)

    /// The tokens of `bytes`, comments and whitespace dropped.
    static func scan(_ bytes: [UInt8]) -> [ManifestToken] {
        var tokens: [ManifestToken] = []
        var at = 0
        func byte(_ offset: Int) -> UInt8? { at + offset < bytes.count ? bytes[at + offset] : nil }
        while at < bytes.count {
            let current = bytes[at]
            switch current {
            case UInt8(ascii: "/") where byte(1) == UInt8(ascii: "/"):
                while at < bytes.count, bytes[at] != UInt8(ascii: "\n") { at += 1 }
            case UInt8(ascii: "/") where byte(1) == UInt8(ascii: "*"):
                // Swift block comments nest.
                var nesting = 0
                repeat {
                    if byte(0) == UInt8(ascii: "/"), byte(1) == UInt8(ascii: "*") {
                        nesting += 1
                        at += 2
                    } else if byte(0) == UInt8(ascii: "*"), byte(1) == UInt8(ascii: "/") {
                        nesting -= 1
                        at += 2
                    } else {
                        at += 1
                    }
                } while nesting > 0 && at < bytes.count
            case UInt8(ascii: "\""), UInt8(ascii: "#"):
                var hashes = 0
                while byte(hashes) == UInt8(ascii: "#") { hashes += 1 }
                guard byte(hashes) == UInt8(ascii: "\"") else {
                    tokens.append(.punctuation(current))
                    at += max(hashes, 1)
                    continue
                }
                at += hashes
                tokens.append(.string(stringLiteral(bytes, at: &at, hashes: hashes)))
            case UInt8(ascii: "("), UInt8(ascii: "["), UInt8(ascii: "{"):
                tokens.append(.open(current))
                at += 1
            case UInt8(ascii: ")"), UInt8(ascii: "]"), UInt8(ascii: "}"):
                tokens.append(.close(current))
                at += 1
            case _ where isWordByte(current):
                let start = at
                while at < bytes.count, isWordByte(bytes[at]) { at += 1 }
                tokens.append(.word(String(decoding: bytes[start..<at], as: UTF8.self)))
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                at += 1
            default:
                tokens.append(.punctuation(current))
                at += 1
            }
        }
        return tokens
    }

    /// The literal opening at `at` (its first `"`, after `hashes` `#`s), `at` moved past its end;
    /// its text when it is plain, nil otherwise.
    static func stringLiteral(_ bytes: [UInt8], at: inout Int, hashes: Int) -> String? {
        let quote = UInt8(ascii: "\"")
        let multiline = at + 2 < bytes.count && bytes[at + 1] == quote && bytes[at + 2] == quote
        let delimiter = multiline ? 3 : 1
        at += delimiter
        let start = at
        var plain = !multiline
        while at < bytes.count {
            if bytes[at] == UInt8(ascii: "\\") {
                // An escape (in a raw string only with its hashes), and so maybe an interpolation
                // whose own literals hold quotes: not a plain string, skipped to the closing
                // parenthesis when it is one.
                var escapeHashes = 0
                while escapeHashes < hashes, at + 1 + escapeHashes < bytes.count,
                    bytes[at + 1 + escapeHashes] == UInt8(ascii: "#")
                {
                    escapeHashes += 1
                }
                if escapeHashes == hashes {
                    plain = false
                    at += 1 + hashes
                    if at < bytes.count, bytes[at] == UInt8(ascii: "(") {
                        var nesting = 0
                        repeat {
                            if bytes[at] == UInt8(ascii: "(") { nesting += 1 }
                            if bytes[at] == UInt8(ascii: ")") { nesting -= 1 }
                            at += 1
                        } while nesting > 0 && at < bytes.count
                        continue
                    }
                }
                at += 1
                continue
            }
            if !multiline, bytes[at] == UInt8(ascii: "\n") { return nil }
            if bytes[at] == quote, (0..<delimiter).allSatisfy({ at + $0 < bytes.count && bytes[at + $0] == quote }),
                (0..<hashes).allSatisfy({
                    at + delimiter + $0 < bytes.count && bytes[at + delimiter + $0] == UInt8(ascii: "#")
                })
            {
                let text = String(decoding: bytes[start..<at], as: UTF8.self)
                at += delimiter + hashes
                return plain ? text : nil
            }
            at += 1
        }
        return nil
    }

    static func isWordByte(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "_") || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte >= 0x80
    }
}
