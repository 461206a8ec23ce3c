// The span recorder: begin/end on the hot path, inlined into the caller's module.
import CPerfShims
import Synchronization

/// Measures spans, ticks their histograms and emits records for the noteworthy ones.
///
/// A scoped span under budget costs one span-clock read at begin and, at end, one read, one
/// histogram tick and one compare: no allocation, no lock. Both methods are `@inlinable` so that
/// path compiles into the caller. Everything else (over budget, registered spans, expiry) is out
/// of line.
///
/// Registered spans (keyed, `.bounded`, `.indefinite`) live in an open-span registry: their begin
/// is emitted as a record and reported to ``LongLivedSpanObserver``s before the span becomes
/// visible to `end(key:)` or to the expiry watchdog, so no end is ever delivered before its begin.
///
/// ```swift
/// let recorder = SpanRecorder(histograms: HistogramRegistry(), pipeline: pipeline)
/// let token = recorder.begin("feed.openThread", budgetNanos: 1_500_000_000, site: CallSite())
/// recorder.end(token, detail: "/v1/threads", count: 200)
/// ```
public final class SpanRecorder: Sendable {
    /// Ticked on every span end.
    @usableFromInline let histograms: HistogramRegistry
    /// Receives the records.
    public let pipeline: RecordPipeline
    @usableFromInline let clock: any PerfClock
    /// True when `clock` is the system clock: the hot path then reads the span clock (TSC or
    /// CLOCK_MONOTONIC, see ``SpanClock``) directly instead of calling through the existential.
    @usableFromInline let readsSystemClock: Bool
    let registry = Mutex(OpenSpanRegistry())
    let nextID = Atomic<UInt64>(1)
    let expiryTimer: any ExpiryTimer
    /// The ring of recent span ends, when the owner keeps one.
    @usableFromInline let flight: FlightRecorder?
    /// Where an over-budget end finds its span's samples, when a span sampler runs.
    let profiles: (any SpanProfileSource)?

    /// Creates a recorder.
    ///
    /// - Parameters:
    ///   - histograms: Per-name latency histograms, ticked on every span end.
    ///   - pipeline: Where records go.
    ///   - clock: Time source. ``SystemClock`` (the default) is read inline on the hot path; any
    ///     other clock (a ``ManualClock`` in tests) is called through the protocol.
    ///   - expiryTimer: The one timer behind expiry and overdue detection. Defaults to a
    ///     ``DispatchExpiryTimer``, which only suits ``SystemClock``; tests pass a
    ///     ``ManualExpiryTimer``.
    ///   - observers: Told synchronously about every registered span's begin and close.
    ///   - flightRecorder: Receives every span end (scoped and registered), for timelines.
    ///   - profiles: Where an over-budget end finds the span sampler's profile of its span.
    public init(
        histograms: HistogramRegistry, pipeline: RecordPipeline, clock: any PerfClock = SystemClock(),
        expiryTimer: (any ExpiryTimer)? = nil, observers: [any LongLivedSpanObserver] = [],
        flightRecorder: FlightRecorder? = nil, profiles: (any SpanProfileSource)? = nil
    ) {
        self.flight = flightRecorder
        self.profiles = profiles
        self.histograms = histograms
        self.pipeline = pipeline
        self.clock = clock
        self.readsSystemClock = clock is SystemClock
        if readsSystemClock { SpanClock.shared.start() }
        self.expiryTimer = expiryTimer ?? DispatchExpiryTimer()
        registry.withLock { $0.observers = observers }
        self.expiryTimer.setHandler { [weak self] in self?.expireDueSpans() }
    }

    /// CLOCK_MONOTONIC-timeline nanoseconds, without the existential call for the system clock:
    /// for it, the span clock (``SpanClock/shared``: the scaled TSC once calibrated, else
    /// CLOCK_MONOTONIC itself).
    @inlinable @inline(__always)
    func monotonicNanos() -> UInt64 {
        readsSystemClock ? perf_fast_ns() : clock.monotonicNanos()
    }

    /// A span's length from its two clock reads: at least 1 ns on the system clock. Its TSC path
    /// converts two reads a tick apart to the same nanosecond, and AMD parts return such pairs for
    /// about 2 % of back-to-back reads, so a span as short as `begin(…).end()` measured 0 ns and a
    /// budget of 0 ("record every span") went unrecorded. Every span takes some time. A test's
    /// manual clock keeps its exact difference.
    @inlinable @inline(__always)
    func elapsed(from start: UInt64, to now: UInt64) -> UInt64 {
        now > start ? now - start : (readsSystemClock ? 1 : 0)
    }

    /// Begins a span.
    ///
    /// - Parameters:
    ///   - name: The span's name; a `StaticString`, so naming costs nothing.
    ///   - budgetNanos: The span is recorded when it runs past this; `nil` records it every time.
    ///   - lifetime: `.scoped` (the default) is not registered; `.bounded` and `.indefinite` are.
    ///   - site: Where the span begins.
    /// - Returns: The token to pass to ``end(_:exit:reason:detail:count:)``.
    @inlinable
    public func begin(
        _ name: StaticString, budgetNanos: UInt64?, lifetime: SpanLifetime = .scoped, site: CallSite
    ) -> SpanToken {
        guard case .scoped = lifetime else {
            return beginRegistered(
                name, key: nil, budgetNanos: budgetNanos, lifetime: lifetime, site: site, start: monotonicNanos())
        }
        let parent = ParentScope.forBegin()
        return SpanToken(
            name: name, startNanos: monotonicNanos(), budgetNanos: budgetNanos, site: site, id: 0, parent: parent)
    }

    /// Begins a scoped span whose parent is `parent` (a ``ChildScopes`` reference): an explicit
    /// child, whatever the thread or task it begins on.
    @inlinable
    public func begin(_ name: StaticString, budgetNanos: UInt64?, site: CallSite, parent: UInt64) -> SpanToken {
        SpanToken(name: name, startNanos: monotonicNanos(), budgetNanos: budgetNanos, site: site, id: 0, parent: parent)
    }

    /// Whether this recorder times spans with the span clock (``SpanClock/shared``), as every
    /// recorder of a real install does; a test's manual clock makes it false.
    public var readsSpanClock: Bool { readsSystemClock }

    /// Begins a scoped span of a recorder that reads the span clock (``readsSpanClock``) without
    /// touching the recorder: what such a recorder's `begin` would return. Lets the facade begin a
    /// span with no reader section and no load through the recorder.
    @inlinable @inline(__always)
    public static func beginOnSpanClock(_ name: StaticString, budgetNanos: UInt64?, site: CallSite) -> SpanToken {
        // The parent first: the clock is read last, and its two paths (TSC, vDSO) join before
        // the token is made rather than each carrying a copy of the parent's branches.
        let parent = ParentScope.forBegin()
        return SpanToken(
            name: name, startNanos: perf_fast_ns(), budgetNanos: budgetNanos, site: site, id: 0, parent: parent)
    }

    /// Ends a span: ticks its histogram, and records it if it ran past its budget (or has none).
    ///
    /// Ending a registered span that was already closed for it (superseded, expired, `closeAll`)
    /// does nothing: its record was emitted when it closed.
    ///
    /// - Parameters:
    ///   - token: What `begin` returned.
    ///   - exit: How the work ended.
    ///   - reason: Why, for a non-success exit (a type name, never user content).
    ///   - detail: Privacy-filtered detail, kept only if the span is recorded.
    ///   - count: An item count, kept only if the span is recorded.
    @inlinable @inline(__always)
    public func end(
        _ token: SpanToken, exit: SpanExit = .success, reason: String? = nil, detail: String? = nil,
        count: Int? = nil, scope: UInt64 = 0
    ) {
        end(token, exit: exit, reason: reason, detail: detail, count: count, probes: true, scope: scope)
    }

    /// The end above with its `span_end` probe compiled in or out: `probes` is a constant at each
    /// call, so the optimizer keeps one side only. `false` serves perf-bench's row without probes
    /// (the same span code, measured in the same run).
    @inlinable @inline(__always)
    package func end(
        _ token: SpanToken, exit: SpanExit, reason: String?, detail: String?, count: Int?, probes: Bool,
        scope: UInt64 = 0, profile: UInt64 = 0
    ) {
        let now = monotonicNanos()
        let elapsed = elapsed(from: token.startNanos, to: now)
        if token.parent != 0 { ParentScope.childEnded(in: token.parent, name: token.name, nanos: elapsed) }
        guard token.id == 0 else {
            endRegistered(token, elapsed: elapsed, exit: exit, reason: reason, detail: detail, count: count)
            return
        }
        var nameRef = histograms.recordIfSeen(token.name, nanos: elapsed)
        if nameRef == 0 { nameRef = histograms.record(token.name, nanos: elapsed, site: token.site) }
        flight?.record(
            token.name, nameRef: nameRef, startNanos: token.startNanos, durationNanos: elapsed,
            budgetNanos: token.budgetNanos, exit: exit)
        if probes { Probes.spanEnd(token.name, durationNanos: elapsed, budgetNanos: token.budgetNanos, exit: exit) }
        if elapsed >= token.recordThresholdNanos {
            recordScopedEnd(
                name: token.name, site: token.site, recordThresholdNanos: token.recordThresholdNanos, elapsed: elapsed,
                exit: exit, reason: reason, detail: detail, count: count, scope: scope,
                // The start only matters with a profile slot (0, a constant, on every inlined
                // end): not kept live to the call otherwise.
                profile: profile, startNanos: profile == 0 ? 0 : token.startNanos, parent: token.parent)
        } else {
            if exit != .success { tallyExit(token.name, exit: exit, site: token.site) }
            if scope != 0 { ParentScope.endUnused(scope) }
        }
    }

    /// An under-budget end that did not succeed: counted in its name's tally, out of line (a
    /// constant `.success` exit folds this branch away).
    @usableFromInline @inline(never)
    func tallyExit(_ name: StaticString, exit: SpanExit, site: CallSite) {
        histograms.tally(name, overBudgetNanos: nil, exit: exit, site: site)
    }

    /// The span flight recorder this recorder writes, if any.
    public var flightRecorder: FlightRecorder? { flight }

    /// The slow path of a scoped span: build its record (wall time is read only here) and emit it.
    ///
    /// Takes the token's fields rather than the token: a token passed whole is passed by address,
    /// so every span's begin stored all of it to the stack for an end that seldom comes here.
    @usableFromInline @inline(never)
    func recordScopedEnd(
        name: StaticString, site: CallSite, recordThresholdNanos: UInt64, elapsed: UInt64, exit: SpanExit,
        reason: String?, detail: String?, count: Int?, scope: UInt64 = 0, profile: UInt64 = 0,
        startNanos: UInt64 = 0, parent: UInt64 = 0
    ) {
        let children = scope == 0 ? [] : ChildScopes.shared.release(scope)
        let budget = SpanToken.budget(recordThresholdNanos: recordThresholdNanos)
        histograms.tally(name, overBudgetNanos: budget == nil ? nil : elapsed, exit: exit, site: site)
        let wall = clock.wallNanos()
        var record = SpanEndRecord(
            id: 0, name: name.description, site: site.description,
            startWallNanos: wall >= elapsed ? wall - elapsed : 0, durationNanos: elapsed,
            budgetNanos: budget, exit: exit,
            reason: reason, detail: detail, count: count, children: children)
        record.childrenUncounted = scope == ParentScope.exhausted
        if scope > ParentScope.exhausted { record.scope = scope }
        if parent > ParentScope.exhausted { record.parentScope = parent }
        if profile != 0 { record.profile = profiles?.take(profile, startNanos: startNanos) }
        pipeline.emit(.spanEnded(record))
    }
}
