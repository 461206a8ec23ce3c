// Journals long-lived spans into the live session, so a crash reports them as orphaned.
import PerfCore

final class SessionSpanJournal: LongLivedSpanObserver {
    let session: LiveSession

    init(session: LiveSession) { self.session = session }

    func spanBegan(_ span: OpenSpanInfo) {
        session.spanBegan(
            id: span.id, name: span.name, key: nil, site: span.site, budgetNanos: span.budgetNanos,
            lifetime: Self.describe(span.lifetime), startWallNanos: span.startWallNanos)
    }

    func spanClosed(id: UInt64, exit: SpanExit) { session.spanClosed(id: id) }

    static func describe(_ lifetime: SpanLifetime) -> String {
        switch lifetime {
        case .scoped: return "scoped"
        case .bounded: return "bounded"
        case .indefinite: return "indefinite"
        }
    }
}
