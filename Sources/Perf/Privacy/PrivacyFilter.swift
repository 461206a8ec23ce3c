// Keeps secrets out of the ledger: URLs lose everything but their path, other text is cut short.

/// Sanitises the free-form `detail` of an event before it reaches a file.
///
/// Events never carry content: a `detail` is meant for a route or a short label. The filter
/// errs on the side of dropping too much:
/// - The text is percent-decoded until it stops changing (so `%3F`, `%23`, `%253F` and an
///   encoded `://` are seen for what they are), split on whitespace and control characters
///   (C0, DEL, C1, line separators and bidirectional overrides),
///   and each word is filtered on its own, so a URL inside a sentence is caught too.
/// - A word loses everything from the first `?` or `#` (query, fragment).
/// - A word containing `//` keeps only the path after the authority that follows the last
///   `//` (no scheme, user info, host or port); `\` counts as `/`. An authority that is not
///   `[user@]host[:port]` means URLs glued together: the word is dropped.
/// - A word with a scheme-like colon (`mailto:`, `data:`, `javascript:`, `host:port/…`)
///   loses the path segment holding the colon and all after it: the content
///   is the payload.
/// - A word containing `@` loses everything up to the host after the last `@`.
/// - Words are joined with single spaces (control characters removed, C1 controls and
///   bidirectional overrides too) and the result is cut to ``maximumBytes`` at a UTF-8
///   boundary.
///
/// ```swift
/// PrivacyFilter.sanitize(detail: "https://u:p@h/p?token=x#f")   // "/p"
/// PrivacyFilter.sanitize(detail: "/v1/threads")                // "/v1/threads"
/// ```
public enum PrivacyFilter {
    /// The longest `detail` written, in UTF-8 bytes.
    public static let maximumBytes = 128
    /// Input past this many bytes is not looked at: the output is far shorter anyway.
    static let maximumInputBytes = 4096

    /// Returns `detail` with anything that could identify a host, a user or a request's
    /// parameters removed, at most ``maximumBytes`` long.
    public static func sanitize(detail: String) -> String {
        isPlainRoute(detail) ? detail : filtered(detail)
    }

    /// The full filter, which ``isPlainRoute(_:)`` lets plain routes skip.
    static func filtered(_ detail: String) -> String {
        var bytes = Array(detail.utf8.prefix(maximumInputBytes))
        while let decoded = percentDecoded(bytes) { bytes = decoded }
        // Invisible controls separate words too: removed only at the end, they would glue a
        // URL's remains to the next word after that word was judged.
        var text = String(decoding: bytes, as: UTF8.self)
        if text.unicodeScalars.contains(where: isInvisibleControl) {
            text = String(String.UnicodeScalarView(text.unicodeScalars.map { isInvisibleControl($0) ? " " : $0 }))
            bytes = Array(text.utf8)
        }
        var output: [UInt8] = []
        for word in words(of: bytes) {
            let filtered = filterWord(word)
            guard !filtered.isEmpty else { continue }
            if !output.isEmpty { output.append(UInt8(ascii: " ")) }
            output.append(contentsOf: filtered)
            if output.count >= maximumBytes { break }
        }
        return truncatedAtScalarBoundary(String(decoding: output, as: UTF8.self))
    }

    /// A short route or label made only of letters, digits and `/ . _ - ~`, without `//`: what
    /// most details are, and what the full filter would return unchanged. Checked without
    /// allocating, so the common over-budget span does not pay for the full parse.
    static func isPlainRoute(_ detail: String) -> Bool {
        detail.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            guard bytes.count <= maximumBytes else { return false }
            var previousWasSlash = false
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
                    UInt8(ascii: "-"), UInt8(ascii: "~"):
                    previousWasSlash = false
                case UInt8(ascii: "/"):
                    if previousWasSlash { return false }
                    previousWasSlash = true
                default:
                    return false
                }
            }
            return true
        } ?? false
    }

    /// C1 controls, line and paragraph separators and bidirectional overrides: invisible in a
    /// terminal or viewer, yet able to rearrange or hide what an operator reads.
    private static func isInvisibleControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x80...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// One pass of `%XX` decoding, or nil when nothing was encoded.
    static func percentDecoded(_ bytes: [UInt8]) -> [UInt8]? {
        guard bytes.contains(UInt8(ascii: "%")) else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = 0
        var changed = false
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
            {
                result.append(high << 4 | low)
                index += 3
                changed = true
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return changed ? result : nil
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Splits on ASCII whitespace and control characters (C0, DEL), which are thereby removed.
    /// Non-ASCII bytes stay inside words; invalid UTF-8 is repaired when the result is built.
    private static func words(of bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        bytes.split(whereSeparator: { $0 <= 0x20 || $0 == 0x7F })
    }

    static func filterWord(_ word: ArraySlice<UInt8>) -> [UInt8] {
        // Query and fragment go first, wherever they start.
        var word = Array(word.prefix(while: { $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }))
        // Browsers read `\` as `/` in URLs; so must we, or `https:\\host` would slip through.
        for index in word.indices where word[index] == UInt8(ascii: "\\") { word[index] = UInt8(ascii: "/") }
        if let authorityStart = lastRange(of: [UInt8(ascii: "/"), UInt8(ascii: "/")], in: word) {
            let afterSlashes = word[authorityStart...]
            let pathStart = afterSlashes.firstIndex(of: UInt8(ascii: "/")) ?? word.endIndex
            guard isPlausibleAuthority(word[authorityStart..<pathStart]) else { return [] }
            word = pathStart == word.endIndex ? [UInt8(ascii: "/")] : Array(word[pathStart...])
        }
        if let start = schemeStart(in: word) { word.removeSubrange(start...) }
        if let at = word.lastIndex(of: UInt8(ascii: "@")) {
            let afterAt = word[(at + 1)...]
            guard let pathStart = afterAt.firstIndex(of: UInt8(ascii: "/")) else { return [] }
            word = Array(word[pathStart...])
        }
        return word
    }

    /// The index just after the last occurrence of `needle`.
    private static func lastRange(of needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        for start in stride(from: bytes.count - needle.count, through: 0, by: -1)
        where bytes[start..<(start + needle.count)].elementsEqual(needle) {
            return start + needle.count
        }
        return nil
    }

    /// Where a `scheme:content` part starts (`mailto:`, `data:`, `host:port/…`, also glued
    /// to a path before it): the path segment holding the first colon that has something
    /// after it and a letter before it. Such content is not ours to keep. `Error:` (nothing
    /// after), `12:30` (no letter) and `/users/:id` keep their words.
    private static func schemeStart(in word: [UInt8]) -> Int? {
        for colon in word.indices where word[colon] == UInt8(ascii: ":") && colon + 1 < word.count {
            let segmentStart = word[..<colon].lastIndex(of: UInt8(ascii: "/")).map { $0 + 1 } ?? 0
            if word[segmentStart..<colon].contains(where: { isLetter($0) || $0 >= 0x80 }) { return segmentStart }
        }
        return nil
    }

    /// Whether `authority` (between `//` and the path) is `[userinfo@]host[:digits]`. Anything
    /// else means the word was not one URL but several glued together, and none of it is kept.
    private static func isPlausibleAuthority(_ authority: ArraySlice<UInt8>) -> Bool {
        var hostPort = authority
        if let at = hostPort.lastIndex(of: UInt8(ascii: "@")) { hostPort = hostPort[(at + 1)...] }
        if let bracket = hostPort.lastIndex(of: UInt8(ascii: "]")) { hostPort = hostPort[(bracket + 1)...] }
        guard let colon = hostPort.lastIndex(of: UInt8(ascii: ":")) else { return true }
        return hostPort[(colon + 1)...].allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    /// Cuts to ``maximumBytes`` without splitting a scalar.
    static func truncatedAtScalarBoundary(_ string: String) -> String {
        let utf8 = string.utf8
        guard utf8.count > maximumBytes else { return string }
        var end = utf8.index(utf8.startIndex, offsetBy: maximumBytes)
        while end > utf8.startIndex, UTF8.isContinuation(utf8[end]) { end = utf8.index(before: end) }
        return String(string[..<end])
    }
}
