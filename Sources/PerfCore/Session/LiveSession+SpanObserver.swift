// The live session journals long-lived spans as the span recorder opens and closes them, so a
// crash reports the ones still open as orphaned.

extension LiveSession: LongLivedSpanObserver {
    /// Journals a registered span's begin. Keys are not journalled: they may carry content.
    public func spanBegan(_ span: OpenSpanInfo) {
        spanBegan(
            id: span.id, name: span.name, key: nil, site: span.site, budgetNanos: span.budgetNanos,
            lifetime: span.lifetime.journalName, startWallNanos: span.startWallNanos)
    }

    /// Journals a registered span's end, whatever its exit.
    public func spanClosed(id: UInt64, exit: SpanExit) { spanClosed(id: id) }
}

extension SpanLifetime {
    /// The lifetime as the session journal records it.
    var journalName: String {
        switch self {
        case .scoped: return "scoped"
        case .bounded: return "bounded"
        case .indefinite: return "indefinite"
        }
    }
}
