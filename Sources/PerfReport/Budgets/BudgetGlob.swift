// Span-name patterns of budget rules: `*` matches any run of characters (dots included, so
// `api.*` covers `api.get` and `api.v2.get`), `?` one character; anything else is literal.
import Perf

extension Budgets {
    /// Whether `pattern` is a glob rather than an exact span name.
    static func isGlob(_ pattern: String) -> Bool { pattern.contains("*") || pattern.contains("?") }

    /// Whether `name` matches `pattern` (exact name or glob).
    static func matches(_ pattern: String, _ name: String) -> Bool {
        let pattern = Array(pattern.unicodeScalars)
        let name = Array(name.unicodeScalars)
        // Iterative wildcard matching with one backtrack point: linear for any pattern a user
        // writes, never exponential on a hostile one.
        var p = 0
        var n = 0
        var star: Int?
        var resume = 0
        while n < name.count {
            if p < pattern.count, pattern[p] == "*" {
                star = p
                resume = n
                p += 1
            } else if p < pattern.count, pattern[p] == "?" || pattern[p] == name[n] {
                p += 1
                n += 1
            } else if let star {
                p = star + 1
                resume += 1
                n = resume
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }
}
