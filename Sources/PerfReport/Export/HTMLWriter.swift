// A tiny HTML and SVG writer for the html export: every string that came from a report goes
// through `escape`, so a hostile span name stays text whatever it contains.
import Perf

/// Markup built up as a string: trusted markup through ``raw(_:)``, report text through
/// ``text(_:limit:)`` and attribute values, which are escaped.
struct HTMLWriter {
    /// Report strings longer than this are cut in visible cells; the full text (up to
    /// ``tooltipLimit``) stays in the tooltip, so a megabyte-long name cannot bloat the page.
    static let visibleLimit = 120
    /// The longest report string a tooltip carries.
    static let tooltipLimit = 400

    private(set) var html = ""

    /// Appends trusted markup (tags and numbers this exporter wrote itself).
    mutating func raw(_ markup: String) { html += markup }

    /// Appends report text, escaped and cut to `limit` characters.
    mutating func text(_ text: String, limit: Int = HTMLWriter.visibleLimit) {
        html += Self.escape(Self.clipped(text, limit))
    }

    /// Appends `<tag a="v" …>`; attribute names are trusted, values escaped.
    mutating func open(_ tag: String, _ attributes: [(String, String)] = []) {
        html += "<" + tag
        for (name, value) in attributes { html += " " + name + "=\"" + Self.escape(value) + "\"" }
        html += ">"
    }

    /// Appends `</tag>`.
    mutating func close(_ tag: String) { html += "</" + tag + ">" }

    /// Appends an element holding escaped text.
    mutating func element(_ tag: String, _ attributes: [(String, String)] = [], text: String) {
        open(tag, attributes)
        self.text(text)
        close(tag)
    }

    /// Appends an SVG shape with a `<title>` tooltip, or self-closed without one.
    mutating func shape(_ tag: String, _ attributes: [(String, String)], tooltip: String?) {
        open(tag, attributes)
        if let tooltip {
            html += "<title>"
            text(tooltip, limit: Self.tooltipLimit)
            html += "</title>"
        }
        close(tag)
    }

    /// Text safe in HTML content and in double- or single-quoted attributes.
    ///
    /// The XML escaping of the JUnit output covers `&<>"'` and drops C0 controls; on top of it
    /// the characters HTML5 calls parse errors (DEL, C1 controls, noncharacters) are dropped
    /// too, and `:`, `(`, `=` and `@` become character references, so no report string can
    /// ever read as `http://`, `url(`, `src=` or `@import` to a browser or to the validator's
    /// grep (the page renders the same characters).
    static func escape(_ text: String) -> String {
        guard text.utf8.contains(where: needsEscape) else { return text }
        var out = ""
        for character in BudgetVerdict.xml(text).unicodeScalars {
            switch character {
            case ":": out += "&#58;"
            case "(": out += "&#40;"
            case "=": out += "&#61;"
            case "@": out += "&#64;"
            default:
                let value = character.value
                let parseError =
                    (0x7F...0x9F).contains(value) || (0xFDD0...0xFDEF).contains(value) || value & 0xFFFE == 0xFFFE
                if !parseError { out.unicodeScalars.append(character) }
            }
        }
        return out
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "&"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\""), UInt8(ascii: "'"),
            UInt8(ascii: ":"), UInt8(ascii: "("), UInt8(ascii: "="), UInt8(ascii: "@"), 0..<0x20, 0x7F...:
            return true
        default:
            return false
        }
    }

    /// `text` cut to `limit` characters with an ellipsis.
    static func clipped(_ text: String, _ limit: Int) -> String {
        guard text.utf8.count > limit, text.count > limit else { return text }
        return String(text.prefix(max(0, limit - 1))) + "…"
    }

    /// A coordinate with at most one decimal (`12`, `12.5`, `-3.2`): short and deterministic.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let tenths = Int64((min(max(value, -1e12), 1e12) * 10).rounded())
        let whole = String(abs(tenths) / 10)
        let sign = tenths < 0 ? "-" : ""
        return tenths % 10 == 0 ? sign + whole : sign + whole + "." + String(abs(tenths) % 10)
    }
}
