// "did you mean …" for a budgeted span the report lacks: an exact `match` with a typo would
// otherwise only say `found nothing`, and read like a span that stopped being recorded.
import Perf

extension BudgetCheck {
    /// At most this many names are suggested.
    static let maximumSuggestions = 3

    /// The names among `names` nearest to `name` by edit distance (insertions, deletions,
    /// substitutions and swaps of neighbours, one each): those at the smallest distance found, by
    /// name, at most ``maximumSuggestions``. A name is near enough when at most a third of
    /// `name`'s characters (at least 2) must change; one that differs only in case counts as one
    /// edit away.
    static func closest(to name: String, among names: some Sequence<String>) -> [String] {
        let target = Array(name)
        let limit = Swift.max(2, target.count / 3)
        var candidates: [(distance: Int, name: String)] = []
        for candidate in names where candidate != name {
            let distance = editDistance(target, Array(candidate), limit: limit)
            if let distance {
                candidates.append((distance, candidate))
            } else if candidate.lowercased() == name.lowercased() {
                candidates.append((1, candidate))
            }
        }
        // Only the nearest: `api.gte` means `api.get`, not also `api.set` two edits away.
        guard let nearest = candidates.map(\.distance).min() else { return [] }
        return Array(candidates.filter { $0.distance == nearest }.map(\.name).sorted().prefix(maximumSuggestions))
    }

    /// The optimal-string-alignment distance between `a` and `b`, or nil when it exceeds `limit`
    /// (a length difference alone over `limit` is nil without computing anything).
    static func editDistance(_ a: [Character], _ b: [Character], limit: Int) -> Int? {
        guard abs(a.count - b.count) <= limit else { return nil }
        if a.isEmpty || b.isEmpty { return Swift.max(a.count, b.count) }
        // Three rows: two back (for swaps), one back, and the current.
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            var rowMinimum = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = Swift.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    value = Swift.min(value, previous2[j - 2] + 1)
                }
                current[j] = value
                rowMinimum = Swift.min(rowMinimum, value)
            }
            if rowMinimum > limit { return nil }
            (previous2, previous, current) = (previous, current, previous2)
        }
        let distance = previous[b.count]
        return distance <= limit ? distance : nil
    }
}
