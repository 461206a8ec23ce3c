// Payloads of the span-related records: ended, began, overdue and unmatched end.

/// A span that closed and is worth keeping.
///
/// Emitted when a scoped span ends over its budget (or had no budget: always recorded), when any
/// registered span closes for whatever reason, and by crash recovery for spans left open
/// (`orphaned`, with an unknown duration).
public struct SpanEndRecord: Sendable, Equatable {
    /// The registered span's id, or 0 for a scoped span (which has no begin record).
    public var id: UInt64
    /// The span's name.
    public var name: String
    /// The key of a keyed span.
    public var key: String?
    /// Where the span began, as `Module/File.swift:88`.
    public var site: String
    /// Wall-clock start, nanoseconds since the Unix epoch.
    public var startWallNanos: UInt64
    /// How long the span was open; `nil` when unknown (an orphaned span of a crashed session).
    public var durationNanos: UInt64?
    /// The budget it was measured against; `nil` means the span is recorded every time.
    public var budgetNanos: UInt64?
    /// How the span closed.
    public var exit: SpanExit
    /// Why it closed that way (an error's type name, never its message).
    public var reason: String?
    /// Caller-supplied detail (the facade privacy-filters it before it gets here).
    public var detail: String?
    /// Caller-supplied item count.
    public var count: Int?
    /// The spans that began and ended inside this one (``ChildScopes``), by name; empty for a span
    /// that is no parent or had no children.
    public var children: [ChildTotal]
    /// The span was a parent but found no free scope (``ParentScope/exhausted``): its
    /// children were not counted.
    public var childrenUncounted = false
    /// This span's parent scope (``ChildScopes``), when it had children: unique within its
    /// process, so its children's lines can name it.
    public var scope: UInt64?
    /// The parent scope this span began in, when it had a parent: the parent's ``scope``.
    public var parentScope: UInt64?
    /// What the span sampler saw while the span was over budget (``SpanProfile``); `nil` when it
    /// took no sample of it.
    public var profile: SpanProfile?

    /// Creates a span end record.
    public init(
        id: UInt64, name: String, key: String? = nil, site: String, startWallNanos: UInt64,
        durationNanos: UInt64?, budgetNanos: UInt64?, exit: SpanExit, reason: String? = nil,
        detail: String? = nil, count: Int? = nil, children: [ChildTotal] = []
    ) {
        self.id = id
        self.name = name
        self.key = key
        self.site = site
        self.startWallNanos = startWallNanos
        self.durationNanos = durationNanos
        self.budgetNanos = budgetNanos
        self.exit = exit
        self.reason = reason
        self.detail = detail
        self.count = count
        self.children = children
    }

    /// True when the span ran past its budget, or has no budget (recorded every time).
    ///
    /// Registered spans always emit an end record so their begin is never left unpaired; a sink
    /// that keeps only slow spans (the ledger) filters on this.
    public var isOverBudgetOrAlwaysRecorded: Bool {
        guard let budgetNanos else { return true }
        guard let durationNanos else { return true }
        return durationNanos > budgetNanos
    }
}

/// A registered span began: keyed, `.bounded` or `.indefinite`.
public struct SpanBeginRecord: Sendable, Equatable {
    /// The span's id, unique within the process.
    public var id: UInt64
    /// The span's name.
    public var name: String
    /// The key of a keyed span.
    public var key: String?
    /// Where the span began, as `Module/File.swift:88`.
    public var site: String
    /// Wall-clock start, nanoseconds since the Unix epoch.
    public var startWallNanos: UInt64
    /// Its slow budget; `nil` means recorded every time.
    public var budgetNanos: UInt64?
    /// How long it may stay open.
    public var lifetime: SpanLifetime

    /// Creates a span begin record.
    public init(
        id: UInt64, name: String, key: String?, site: String, startWallNanos: UInt64, budgetNanos: UInt64?,
        lifetime: SpanLifetime
    ) {
        self.id = id
        self.name = name
        self.key = key
        self.site = site
        self.startWallNanos = startWallNanos
        self.budgetNanos = budgetNanos
        self.lifetime = lifetime
    }
}

/// A budgeted registered span is still open past its budget. Emitted at most once per span and
/// never after the span's end.
public struct OverdueRecord: Sendable, Equatable {
    /// The open span's id.
    public var id: UInt64
    /// The span's name.
    public var name: String
    /// The key of a keyed span.
    public var key: String?
    /// Where the span began, as `Module/File.swift:88`.
    public var site: String
    /// How long the span had been open when the watchdog noticed.
    public var openForNanos: UInt64
    /// The budget it ran past.
    public var budgetNanos: UInt64
    /// When the watchdog noticed, nanoseconds since the Unix epoch.
    public var wallNanos: UInt64

    /// Creates an overdue record.
    public init(
        id: UInt64, name: String, key: String?, site: String, openForNanos: UInt64, budgetNanos: UInt64,
        wallNanos: UInt64
    ) {
        self.id = id
        self.name = name
        self.key = key
        self.site = site
        self.openForNanos = openForNanos
        self.budgetNanos = budgetNanos
        self.wallNanos = wallNanos
    }
}

/// `end(key:)` was called with no span open under that key: reported rather than dropped, since
/// it usually means a begin was lost or a span was ended twice.
public struct UnmatchedEndRecord: Sendable, Equatable {
    /// The key nothing was open under.
    public var key: String
    /// The span name the caller gave, when it gave one.
    public var name: String?
    /// The call site of the end, `Module/File.swift:line`, when the caller gave one: where to
    /// look for the end that has no begin.
    public var site: String?
    /// When it happened, nanoseconds since the Unix epoch.
    public var wallNanos: UInt64

    /// Creates an unmatched end record.
    public init(key: String, name: String?, site: String? = nil, wallNanos: UInt64) {
        self.key = key
        self.name = name
        self.site = site
        self.wallNanos = wallNanos
    }
}
