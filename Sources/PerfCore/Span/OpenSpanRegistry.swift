// The open registered spans, by id and by key, with their pending deadlines.

/// One registered span that has not closed yet.
struct OpenSpan: Sendable {
    let info: OpenSpanInfo
    let name: StaticString
    /// Where it began (also rendered in `info`), for the name's histogram entry.
    let site: CallSite
    let startNanos: UInt64
    /// When a `.bounded` span closes as `expired`.
    let expiryDeadline: UInt64?
    /// When a budgeted span is reported overdue; cleared once reported, so it fires at most once.
    var overdueDeadline: UInt64?
}

/// State behind the recorder's registry lock.
///
/// Every decision about a registered span (close by its end, supersede, expire, report overdue)
/// is taken while holding this state, which is what makes "overdue never after end" and "no end
/// before begin" hold under any interleaving.
struct OpenSpanRegistry: Sendable {
    var spans: [UInt64: OpenSpan] = [:]
    var idsByKey: [String: UInt64] = [:]
    var observers: [any LongLivedSpanObserver] = []
    /// The deadline the expiry timer is armed for, if any.
    var armedDeadline: UInt64?

    /// Adds a span, returning the one it displaced under the same key.
    mutating func insert(_ span: OpenSpan) -> OpenSpan? {
        var displaced: OpenSpan?
        if let key = span.info.key, let previous = idsByKey[key] {
            displaced = spans.removeValue(forKey: previous)
        }
        spans[span.info.id] = span
        if let key = span.info.key { idsByKey[key] = span.info.id }
        return displaced
    }

    /// Removes a span by id (and its key, if the key still points at it).
    mutating func remove(id: UInt64) -> OpenSpan? {
        guard let span = spans.removeValue(forKey: id) else { return nil }
        if let key = span.info.key, idsByKey[key] == id { idsByKey[key] = nil }
        return span
    }

    /// Removes the span open under a key.
    mutating func remove(key: String) -> OpenSpan? {
        guard let id = idsByKey[key] else { return nil }
        return remove(id: id)
    }

    /// The earliest pending expiry or overdue deadline.
    func earliestDeadline() -> UInt64? {
        var earliest: UInt64?
        for span in spans.values {
            for deadline in [span.expiryDeadline, span.overdueDeadline].compactMap({ $0 }) {
                earliest = min(earliest ?? deadline, deadline)
            }
        }
        return earliest
    }
}
