// Parent links for flight-recorder spans: the ring does not record scopes, but a slow span's
// ledger line does, and when the ring also holds that span the line is not drawn; its scope and
// parentScope pass to the ring's span it describes (same name, same end and duration to the
// ledger's millisecond), so a child in the ring still finds its parent.

/// A span's own scope (it had children) and the scope of the parent it began in.
struct SpanScopes: Equatable {
    var scope: Int64?
    var parentScope: Int64?
}

extension ExportTimeline.Session {
    /// Gives each covered line that carries a scope to the flight-recorder span it describes: the
    /// closest of the same name whose end and duration are within the ledger's resolution, each
    /// span taken once.
    mutating func matchScopes(of covered: [ExportTimeline.Event]) {
        let scoped = covered.filter { $0.scope != nil || $0.parentScope != nil }
        guard !scoped.isEmpty else { return }
        var byName: [String: [Int]] = [:]
        for (index, interval) in intervals.enumerated() { byName[interval.name, default: []].append(index) }
        let tolerance = ExportTimeline.ledgerResolutionNanos
        for event in scoped {
            let duration = ExportTimeline.durationNanos(event)
            var best: (index: Int, distance: Int64)?
            for index in byName[event.name] ?? [] where intervalScopes[index] == nil {
                let interval = intervals[index]
                // Both are bounded by ExportReading's limits, so the differences cannot overflow.
                let endGap = abs(interval.startUnixNanos + interval.durationNanos - event.timeUnixNanos)
                let durationGap = abs(interval.durationNanos - duration)
                guard endGap <= tolerance, durationGap <= tolerance else { continue }
                if best.map({ endGap + durationGap < $0.distance }) ?? true { best = (index, endGap + durationGap) }
            }
            if let best { intervalScopes[best.index] = SpanScopes(scope: event.scope, parentScope: event.parentScope) }
        }
    }
}
