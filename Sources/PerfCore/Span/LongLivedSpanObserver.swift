// The hook the session journal uses to remember long-lived spans across a crash.

/// A registered span as observers see it when it begins.
public struct OpenSpanInfo: Sendable, Equatable {
    /// Unique within the process; the id `spanClosed(id:exit:)` later reports.
    public let id: UInt64
    /// The span's name.
    public let name: String
    /// The key of a keyed span.
    public let key: String?
    /// Where it began, as `Module/File.swift:88`.
    public let site: String
    /// Its slow budget; `nil` means recorded every time.
    public let budgetNanos: UInt64?
    /// How long it may stay open.
    public let lifetime: SpanLifetime
    /// Wall-clock start, nanoseconds since the Unix epoch.
    public let startWallNanos: UInt64

    /// Creates the description of an open span.
    public init(
        id: UInt64, name: String, key: String?, site: String, budgetNanos: UInt64?, lifetime: SpanLifetime,
        startWallNanos: UInt64
    ) {
        self.id = id
        self.name = name
        self.key = key
        self.site = site
        self.budgetNanos = budgetNanos
        self.lifetime = lifetime
        self.startWallNanos = startWallNanos
    }
}

/// Receives every registered span's begin and close, synchronously.
///
/// The session journal implements this to journal long-lived spans, so the next start can report
/// the ones a crash left open as `orphaned`.
///
/// - Warning: Both calls run under the recorder's registry lock, in order (a span's close is never
///   reported before its begin). They must not call back into the ``SpanRecorder`` for registered
///   spans, and should return quickly (a journal append to the page cache is fine; an fsync is
///   not).
public protocol LongLivedSpanObserver: Sendable {
    /// A registered span began.
    func spanBegan(_ span: OpenSpanInfo)
    /// A registered span closed, by its end or for it (superseded, expired, `closeAll`).
    func spanClosed(id: UInt64, exit: SpanExit)
}
