// Registered spans: keyed, bounded and indefinite ones, their supersede and close paths.

extension SpanRecorder {
    /// Begins a keyed span, superseding any span still open under the same key.
    ///
    /// The superseded span is closed as `superseded`, and its end record is emitted after this
    /// span's begin record: a reader sees the new begin, then the old span's close.
    ///
    /// - Parameters:
    ///   - key: Identifies the span across call sites (`end(key:)` closes it).
    ///   - name: The span's name.
    ///   - budgetNanos: Recorded as slow past this, reported overdue while still open past it;
    ///     `nil` records every time.
    ///   - lifetime: `.bounded` to have the watchdog close it as `expired`; `.scoped` is treated
    ///     as `.indefinite`, since a keyed span always lives in the registry.
    ///   - site: Where the span begins.
    /// - Returns: A token that can also end the span, like `end(key:)`.
    @discardableResult
    public func begin(
        key: String, _ name: StaticString, budgetNanos: UInt64?, lifetime: SpanLifetime = .indefinite,
        site: CallSite
    ) -> SpanToken {
        let start = monotonicNanos()
        let registered = lifetime == .scoped ? SpanLifetime.indefinite : lifetime
        return beginRegistered(name, key: key, budgetNanos: budgetNanos, lifetime: registered, site: site, start: start)
    }

    /// Ends the span open under `key`.
    ///
    /// With no span open under the key (never begun, already ended, superseded or expired), an
    /// ``UnmatchedEndRecord`` is emitted rather than the call being silently dropped; it carries
    /// `site`, the end's call site, when given.
    public func end(
        key: String, exit: SpanExit = .success, reason: String? = nil, detail: String? = nil, count: Int? = nil,
        site: CallSite? = nil
    ) {
        let now = monotonicNanos()
        let closed = registry.withLock { registry -> ClosedSpan? in
            guard let span = registry.remove(key: key) else { return nil }
            let elapsed = elapsed(from: span.startNanos, to: now)
            histograms.record(span.name, nanos: elapsed, site: span.site)
            return close(
                span, observers: registry.observers, exit: exit, elapsed: elapsed, reason: reason, detail: detail,
                count: count)
        }
        guard let closed else {
            pipeline.emit(
                .unmatchedEnd(
                    UnmatchedEndRecord(key: key, name: nil, site: site?.description, wallNanos: clock.wallNanos())))
            return
        }
        closed.finish()
    }

    /// How many registered spans are open.
    public var openSpanCount: Int { registry.withLock { $0.spans.count } }

    /// Closes every open registered span with `exit`: for shutdown.
    ///
    /// Each gets its end record and its observers' `spanClosed`; the expiry timer is disarmed.
    public func closeAll(exit: SpanExit) {
        let now = monotonicNanos()
        let closed = registry.withLock { registry in
            let closed = registry.spans.keys.sorted().compactMap { id -> ClosedSpan? in
                guard let span = registry.remove(id: id) else { return nil }
                let elapsed = now >= span.startNanos ? now - span.startNanos : 0
                return close(
                    span, observers: registry.observers, exit: exit, elapsed: elapsed, reason: nil, detail: nil,
                    count: nil)
            }
            registry.armedDeadline = nil
            expiryTimer.disarm()
            return closed
        }
        for close in closed { close.finish() }
    }

    /// Adds an observer of registered spans: it hears every begin and close from now on, so it may
    /// see the close of a span that began before it was added.
    public func addObserver(_ observer: any LongLivedSpanObserver) {
        registry.withLock { $0.observers.append(observer) }
    }

    /// Registers a span: its begin record and observers first, then the registry, then the timer.
    @usableFromInline
    func beginRegistered(
        _ name: StaticString, key: String?, budgetNanos: UInt64?, lifetime: SpanLifetime, site: CallSite,
        start: UInt64
    ) -> SpanToken {
        let id = nextID.add(1, ordering: .relaxed).oldValue
        let info = OpenSpanInfo(
            id: id, name: name.description, key: key, site: site.description, budgetNanos: budgetNanos,
            lifetime: lifetime, startWallNanos: clock.wallNanos())
        var expiry: UInt64?
        if case .bounded(let lifetimeNanos) = lifetime { expiry = Self.deadline(start, plus: lifetimeNanos) }
        let overdue = budgetNanos.flatMap { Self.deadline(start, plus: $0) }
        let span = OpenSpan(
            info: info, name: name, site: site, startNanos: start, expiryDeadline: expiry, overdueDeadline: overdue)
        Probes.spanBegin(name, budgetNanos: budgetNanos)
        // Observed before the span is inserted, and its record numbered before (under the registry
        // lock), so nothing can end it before its begin. No observer, and nothing of a sink that may
        // wait, runs under the registry lock (a concurrent sink only queues there): a slow ledger
        // write or journal stalls no other thread's span.
        for observer in registry.withLock({ $0.observers }) { observer.spanBegan(info) }
        let (begun, displaced) = registry.withLock { registry -> (PendingDelivery?, ClosedSpan?) in
            let begun = pipeline.enqueue(
                .spanBegan(
                    SpanBeginRecord(
                        id: id, name: info.name, key: key, site: info.site, startWallNanos: info.startWallNanos,
                        budgetNanos: budgetNanos, lifetime: lifetime)))
            let displaced = registry.insert(span).map { displaced in
                let elapsed = start >= displaced.startNanos ? start - displaced.startNanos : 0
                return close(
                    displaced, observers: registry.observers, exit: .superseded, elapsed: elapsed, reason: nil,
                    detail: nil, count: nil)
            }
            // The timer wakes at most once per millisecond (its leeway): armed for each span due at
            // once (a budget of 0), it fired once per span, and libdispatch's timer churn held
            // memory (+26 B per keyed span in the reliability soak).
            for deadline in [expiry, overdue].compactMap({ $0 }) {
                let wake = max(deadline, start &+ Self.minimumTimerDelayNanos)
                guard wake < registry.armedDeadline ?? .max else { continue }
                registry.armedDeadline = wake
                expiryTimer.arm(atMonotonicNanos: wake)
            }
            return (begun, displaced)
        }
        begun?.deliver()
        displaced?.finish()
        return SpanToken(name: name, startNanos: start, budgetNanos: budgetNanos, site: site, id: id)
    }

    /// Closes a registered span by its token, unless it was closed for it already.
    @usableFromInline
    func endRegistered(
        _ token: SpanToken, elapsed: UInt64, exit: SpanExit, reason: String?, detail: String?, count: Int?
    ) {
        let closed = registry.withLock { registry -> ClosedSpan? in
            guard let span = registry.remove(id: token.id) else { return nil }
            histograms.record(token.name, nanos: elapsed, site: token.site)
            return close(
                span, observers: registry.observers, exit: exit, elapsed: elapsed, reason: reason, detail: detail,
                count: count)
        }
        closed?.finish()
    }

    /// The expiry timer's handler: expires bounded spans past their lifetime and reports budgeted
    /// spans past their budget, then re-arms the timer at the next earliest deadline.
    func expireDueSpans() {
        // Records are numbered under the registry lock (an overdue report before the span's end)
        // and delivered after it, like every close.
        let (closed, overdue) = registry.withLock { registry in
            let now = monotonicNanos()
            var closed: [ClosedSpan] = []
            var overdue: [PendingDelivery?] = []
            for id in registry.spans.keys.sorted() {
                guard let span = registry.spans[id] else { continue }
                let openFor = now >= span.startNanos ? now - span.startNanos : 0
                if let expiry = span.expiryDeadline, expiry <= now {
                    _ = registry.remove(id: id)
                    closed.append(
                        close(
                            span, observers: registry.observers, exit: .expired, elapsed: openFor, reason: nil,
                            detail: nil, count: nil))
                } else if let due = span.overdueDeadline, due <= now, let budget = span.info.budgetNanos {
                    registry.spans[id]?.overdueDeadline = nil
                    overdue.append(
                        pipeline.enqueue(
                            .overdue(
                                OverdueRecord(
                                    id: id, name: span.info.name, key: span.info.key, site: span.info.site,
                                    openForNanos: openFor, budgetNanos: budget, wallNanos: clock.wallNanos()))))
                }
            }
            registry.armedDeadline = registry.earliestDeadline()
            if let next = registry.armedDeadline {
                expiryTimer.arm(atMonotonicNanos: next)
            } else {
                expiryTimer.disarm()
            }
            return (closed, overdue)
        }
        // Deliveries in the order they were numbered: closes and overdue reports interleave by id,
        // but each lane delivers in sequence order whatever the order of these calls.
        for close in closed { close.finish() }
        for pending in overdue { pending?.deliver() }
    }

    /// The earliest the expiry timer is armed after a begin.
    static let minimumTimerDelayNanos: UInt64 = 1_000_000

    /// `start + interval`, or nil when that lies beyond the clock's range: such a deadline never
    /// comes, and a wrapped one would fire at once.
    private static func deadline(_ start: UInt64, plus interval: UInt64) -> UInt64? {
        let (sum, overflow) = start.addingReportingOverflow(interval)
        return overflow ? nil : sum
    }

    /// Numbers a registered span's end record, under the registry lock (the caller removed the
    /// span); ``ClosedSpan/finish()`` delivers it and tells observers once the lock is released.
    private func close(
        _ span: OpenSpan, observers: [any LongLivedSpanObserver], exit: SpanExit, elapsed: UInt64, reason: String?,
        detail: String?, count: Int?
    ) -> ClosedSpan {
        let info = span.info
        let over = info.budgetNanos.map { elapsed > $0 } ?? false
        let nameRef = histograms.tally(span.name, overBudgetNanos: over ? elapsed : nil, exit: exit, site: span.site)
        flight?.record(
            span.name, nameRef: nameRef, startNanos: span.startNanos, durationNanos: elapsed,
            budgetNanos: info.budgetNanos, exit: exit)
        Probes.spanEnd(span.name, durationNanos: elapsed, budgetNanos: info.budgetNanos, exit: exit)
        let pending = pipeline.enqueue(
            .spanEnded(
                SpanEndRecord(
                    id: info.id, name: info.name, key: info.key, site: info.site, startWallNanos: info.startWallNanos,
                    durationNanos: elapsed, budgetNanos: info.budgetNanos, exit: exit, reason: reason, detail: detail,
                    count: count)))
        return ClosedSpan(id: info.id, exit: exit, pending: pending, observers: observers)
    }
}

/// A registered span's close, numbered under the registry lock, finished after it.
struct ClosedSpan: Sendable {
    let id: UInt64
    let exit: SpanExit
    let pending: PendingDelivery?
    let observers: [any LongLivedSpanObserver]

    /// Delivers the end record to the sinks this thread owns, then tells the observers.
    func finish() {
        pending?.deliver()
        for observer in observers { observer.spanClosed(id: id, exit: exit) }
    }
}
