// Budgeted spans: `Perf.begin` … `span.end()`, keyed spans and `Perf.measure`.
import CPerfShims
import PerfCore
import Synchronization

extension Perf {
    /// An open span: a small value that ends once.
    ///
    /// Under budget, `end()` ticks the span's histogram and stores nothing else; over budget (or
    /// with `slowMs: nil`) its ledger line is crash-durable when `end()` returns: copied into the
    /// ledger's queue, a file mapping the next start writes from after a kill, and written to the
    /// ledger by this thread unless another thread is writing then or wrote within the last
    /// millisecond (that one, or the ledger's queue within a millisecond, writes it next, in order:
    /// no thread waits for another's disk write). The queue is bounded by
    /// ``Configuration/ledgerBacklogBytes``; a line that finds it full is counted in a `dropped`
    /// line. Either way an over-budget or failed end is counted in span memory, which the report's
    /// over-budget and exit figures come from.
    ///
    /// A span is `~Copyable` and both `end` methods are `consuming`, so a span that could be ended
    /// twice does not compile: a second `end()`, or ending a copy, is the compiler's
    /// `'span' consumed more than once`. Costs nothing at run time: the check is the compiler's.
    /// To end a span later or elsewhere, move it: pass it as a `consuming` parameter, or keep it in
    /// a `var` Optional and end it with `span.take()?.end()` (a second `take()` finds `nil`). That
    /// Optional is also the idiom for `defer { span.take()?.end() }`, since a `defer` cannot
    /// consume a local; `Perf.measure` ends its span however the closure leaves.
    public struct Span: ~Copyable, Sendable {
        @usableFromInline let token: SpanToken?
        /// This span's own parent scope (``ChildScopes``), made by its first ``child(_:slowMs:fileID:line:)``
        /// or by `measure`; 0 while it has none.
        @usableFromInline var scope: UInt64

        @inlinable
        init(token: SpanToken?, scope: UInt64 = 0) {
            self.token = token
            self.scope = scope
        }

        /// Ends the span successfully; the span is consumed.
        @inlinable @inline(__always)
        public consuming func end() {
            // No pre-check of the slot: a token exists only if something was installed at begin,
            // and the acquiring load below finds nothing once it is shut down.
            guard let token else { return Span.endScopeOnly(scope) }
            // A span with a scope of its own (a measure's, or one that made children) ends out of
            // line, so the end inlined into every caller carries no scope.
            guard scope == 0 else { return Span.endParent(token, scope: scope) }
            // Neither `withRecorder` nor a closure expression: the optimiser may call either out of
            // line, with the token stored to the stack. A transparent local function is inlined
            // before optimisation, so the whole end lands in the caller.
            @_transparent func endOn(_ recorder: SpanRecorder) { recorder.end(token) }
            let section = perf_reader_enter()
            if let recorder = PerfState.recorderSlot.load(ordering: .acquiring) {
                recorder._withUnsafeGuaranteedRef(endOn)
            }
            perf_reader_exit(section)
        }

        /// The successful end of a span with a scope of its own: its children's totals go to its
        /// line, or the scope is freed.
        @usableFromInline @inline(never)
        static func endParent(_ token: SpanToken, scope: UInt64) {
            let ended: Bool? = PerfState.withRecorder {
                $0.end(token, scope: scope)
                return true
            }
            if ended == nil { ParentScope.endUnused(scope) }
        }

        /// The successful end of a span the sampler took samples of (`profile` is their slot),
        /// out of line: only a span past its budget gets here.
        @usableFromInline @inline(never)
        static func endSampled(_ span: consuming Span, profile: UInt64) {
            span.end(exit: .success, reason: nil, profile: profile)
        }

        /// Frees a scope whose span ends into nothing (inert, or after `shutdown`).
        @inlinable
        static func endScopeOnly(_ scope: UInt64) {
            if scope != 0 { ParentScope.endUnused(scope) }
        }

        /// Begins a child of this span: its time is added to this span's `children` (shown when
        /// this span is over budget), wherever and on whatever thread or task it ends, as long as
        /// it ends before this span does. For callback-style code, where one thread interleaves
        /// many requests' spans and nesting cannot be told from the thread: keep the request's
        /// span in a `var` and make its children from it. The child keeps its own histogram,
        /// budget and line. This span is not consumed.
        ///
        /// ```swift
        /// var request = Perf.begin("api.get", slowMs: 1000)
        /// let query = request.child("db.query", slowMs: 50)
        /// query.end()
        /// request.end()   // over budget: its line lists db.query under "children"
        /// ```
        public mutating func child(
            _ name: StaticString, slowMs: Double?, fileID: StaticString = #fileID, line: UInt = #line
        ) -> Span {
            guard token != nil, PerfState.recorderSlot.load(ordering: .relaxed) != nil else { return Span(token: nil) }
            if scope == 0 { scope = ChildScopes.shared.acquire() }
            let parent = scope
            let site = CallSite(fileID: fileID, line: UInt32(truncatingIfNeeded: line))
            return Span(
                token: PerfState.withRecorder {
                    $0.begin(name, budgetNanos: Perf.budgetNanos(slowMs), site: site, parent: parent)
                })
        }

        /// `end()` with the `span_end` USDT probe compiled out: perf-bench's baseline for what the
        /// probe costs a program when no tracer listens (the same code, measured in the same run).
        @inlinable
        package consuming func endWithoutProbe() {
            guard let token else { return Span.endScopeOnly(scope) }
            guard scope == 0 else { return Span.endParent(token, scope: scope) }
            @_transparent func endOn(_ recorder: SpanRecorder) {
                recorder.end(token, exit: .success, reason: nil, detail: nil, count: nil, probes: false)
            }
            let section = perf_reader_enter()
            if let recorder = PerfState.recorderSlot.load(ordering: .acquiring) {
                recorder._withUnsafeGuaranteedRef(endOn)
            }
            perf_reader_exit(section)
        }

        /// Ends the span with any combination of exit, detail, count and reason; the span is
        /// consumed.
        ///
        /// - Parameters:
        ///   - exit: How the span ended (`.success` by default; `.failure`, `.cancelled`, …).
        ///   - detail: What the span worked on; privacy-filtered (a URL keeps its path only, any
        ///     other string is cut to 128 bytes). Kept only when the span is recorded.
        ///   - count: How many items the span handled.
        ///   - reason: A short, content-free reason for a non-success exit (an error type name).
        public consuming func end(
            exit: Exit = .success, detail: String? = nil, count: Int? = nil, reason: String? = nil
        ) {
            end(exit: exit, detail: detail, count: count, reason: reason, profile: 0)
        }

        /// The end above, with the span sampler's profile slot of a measured span.
        consuming func end(exit: Exit, detail: String? = nil, count: Int? = nil, reason: String?, profile: UInt64) {
            let scope = scope
            guard let token, PerfState.recorderSlot.load(ordering: .relaxed) != nil else {
                return Span.endScopeOnly(scope)
            }
            let ended: Bool? = PerfState.withRecorder {
                $0.end(
                    token, exit: exit, reason: reason, detail: detail, count: count, probes: true, scope: scope,
                    profile: profile)
                return true
            }
            if ended == nil { Span.endScopeOnly(scope) }
        }
    }

    /// How long a keyed span may stay open. (A span that ends where it began is `Perf.begin`'s
    /// ``Span``; keyed spans are always tracked while open.)
    public enum Lifetime: Sendable, Equatable {
        /// Closed as `expired` by the span watchdog if still open after this many milliseconds.
        case bounded(ms: Double)
        /// Open until ended or superseded; journalled, so a crash reports it as orphaned.
        case indefinite
    }

    /// Begins a span at this call site.
    ///
    /// - Parameters:
    ///   - name: A static name such as `"api.get"`; spans of one name share a histogram.
    ///   - slowMs: The budget in milliseconds; a longer span is written to the ledger. `nil`
    ///     records every time.
    /// - Returns: The span to end, once. Before `install` it is inert and `end()` does nothing.
    @inlinable @inline(__always)
    public static func begin(
        _ name: StaticString, slowMs: Double?, fileID: StaticString = #fileID, line: UInt = #line
    ) -> Span {
        guard let installed = PerfState.recorderSlot.load(ordering: .relaxed) else { return Span(token: nil) }
        let site = CallSite(fileID: fileID, line: UInt32(truncatingIfNeeded: line))
        if perf_span_clock_recorder_load() == UInt(bitPattern: installed.toOpaque()) {
            // The recorder reads the span clock, and a scoped begin needs nothing else of it: no
            // reader section, no load through the recorder (which shutdown may free meanwhile).
            return Span(token: SpanRecorder.beginOnSpanClock(name, budgetNanos: budgetNanos(slowMs), site: site))
        }
        let section = perf_reader_enter()
        defer { perf_reader_exit(section) }
        guard let recorder = PerfState.recorderSlot.load(ordering: .acquiring) else { return Span(token: nil) }
        return Span(
            token: recorder._withUnsafeGuaranteedRef { $0.begin(name, budgetNanos: budgetNanos(slowMs), site: site) })
    }

    /// Begins a span that another place ends by key; a second begin under an open key supersedes
    /// the first (closed as `superseded`).
    ///
    /// - Parameters:
    ///   - key: Identifies the span until its end; never written to any file.
    ///   - name: The span's static name.
    ///   - slowMs: The budget in milliseconds; `nil` records every time. A span still open past its
    ///     budget produces an `overdue` line.
    ///   - lifetime: `.indefinite` (default) or `.bounded(ms:)`.
    public static func begin(
        key: String, _ name: StaticString, slowMs: Double?, lifetime: Lifetime = .indefinite,
        fileID: StaticString = #fileID, line: UInt = #line
    ) {
        guard PerfState.recorderSlot.load(ordering: .relaxed) != nil else { return }
        let site = CallSite(fileID: fileID, line: UInt32(truncatingIfNeeded: line))
        let lifetime: SpanLifetime =
            switch lifetime {
            case .indefinite: .indefinite
            case .bounded(let ms): .bounded(budgetNanos: budgetNanos(ms) ?? 0)
            }
        _ = PerfState.withRecorder {
            $0.begin(key: key, name, budgetNanos: budgetNanos(slowMs), lifetime: lifetime, site: site)
        }
    }

    /// Ends the span begun under `key`, with the same optional context as ``Span/end(exit:detail:count:reason:)``.
    /// An end with no open span is reported, not dropped: a `note` line named `perf.unmatchedEnd`
    /// whose `site` is this call's.
    public static func end(
        key: String, exit: Exit = .success, detail: String? = nil, count: Int? = nil, reason: String? = nil,
        fileID: StaticString = #fileID, line: UInt = #line
    ) {
        guard PerfState.recorderSlot.load(ordering: .relaxed) != nil else { return }
        let site = CallSite(fileID: fileID, line: UInt32(truncatingIfNeeded: line))
        PerfState.withRecorder {
            $0.end(key: key, exit: exit, reason: reason, detail: detail, count: count, site: site)
        }
    }

    /// Measures `body` as one span; the exit follows how it left (return → success,
    /// `CancellationError` → cancelled, any other error → failure with the error's type name).
    /// Like a ``Span``, it ends into whatever is installed when `body` returns (nothing after a
    /// ``shutdown()``).
    // Always inlined, as `begin` and `end` are: at the call the name and call site are constants,
    // so the body's call keeps little live across it. Called out of line, they are arguments
    // saved around the body, which made a measure cost a fifth more than begin and end.
    @inlinable @inline(__always)
    public static func measure<Result, Failure: Error>(
        _ name: StaticString, slowMs: Double?, fileID: StaticString = #fileID, line: UInt = #line,
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        guard PerfState.recorderSlot.load(ordering: .relaxed) != nil else { return try body() }
        // Begin and end each load the slot, as a span's do: no reference to the recorder is held
        // across `body`, so a shutdown meanwhile can free it (the end then goes to whatever is
        // installed by then, or nowhere).
        // The body's spans join this one's scope through a thread-local: `pending` until the first
        // of them makes the scope, so a measure without children makes none.
        var span = begin(name, slowMs: slowMs, fileID: fileID, line: line)
        // While a span sampler runs, the span is on this thread's stack of sampled spans for the
        // body's length: the sampler reads the thread once the span is past its budget.
        let sampled =
            span.token.map {
                perf_sampled_push($0.startNanos, $0.overBudgetThresholdNanos, ChildScopes.nameWord(name))
            } ?? 0
        let outer = perf_scope_get()
        perf_scope_set(ParentScope.pending)
        let result: Result
        do {
            result = try body()
        } catch {
            span.scope = Self.takeScope(restoring: outer)
            Self.endMeasure(span, failedWith: error, profile: sampled == 0 ? 0 : perf_sampled_pop())
            throw error
        }
        span.scope = Self.takeScope(restoring: outer)
        let profile = sampled == 0 ? 0 : perf_sampled_pop()
        if profile == 0 {
            span.end()
        } else {
            Span.endSampled(span, profile: profile)
        }
        return result
    }

    /// A measure's span ended by a thrown error, out of line: the error's inspection (its
    /// type's metadata, a cast) stays off the path of a body that returns.
    @usableFromInline @inline(never)
    static func endMeasure(_ span: consuming Span, failedWith error: any Error, profile: UInt64 = 0) {
        span.end(exit: SpanExit.derived(from: error), reason: measureReason(for: error), profile: profile)
    }

    /// The scope a synchronous measure's body made (0 if none), with the thread-local put back.
    @inlinable
    static func takeScope(restoring outer: UInt64) -> UInt64 {
        let scope = perf_scope_get()
        perf_scope_set(outer)
        return scope > ParentScope.pending ? scope : 0
    }

    /// Measures an async `body` as one span, on the caller's isolation.
    @inlinable
    public static func measure<Result, Failure: Error>(
        _ name: StaticString, slowMs: Double?, fileID: StaticString = #fileID, line: UInt = #line,
        isolation: isolated (any Actor)? = #isolation, _ body: () async throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        guard PerfState.recorderSlot.load(ordering: .relaxed) != nil else { return try await body() }
        // No reader section spans the await (it would resume on another thread): begin and end
        // each load the slot, as the synchronous form's do.
        // The body's spans, and those of the child tasks structured under it, join this one's
        // scope through a task-local.
        var span = begin(name, slowMs: slowMs, fileID: fileID, line: line)
        let scope = span.token == nil ? 0 : ChildScopes.shared.acquire()
        span.scope = scope
        perf_async_scopes_add(1)
        // While a span sampler runs, the body's jobs run on an executor that puts the span on
        // the thread running each of them: sampled where it runs, `suspended` while it awaits.
        let executor = sampledExecutor(for: span, name: name)
        let outcome: Swift.Result<Result, Failure> = await ParentScope.$current.withValue(scope) {
            await withTaskExecutorPreference(executor) {
                do throws(Failure) {
                    return .success(try await body())
                } catch {
                    return .failure(error)
                }
            }
        }
        perf_async_scopes_add(-1)
        let profile = endSampledExecutor(executor)
        switch outcome {
        case .success(let result):
            if profile == 0 {
                span.end()
            } else {
                Span.endSampled(span, profile: profile)
            }
            return result
        case .failure(let error):
            endMeasure(span, failedWith: error, profile: profile)
            throw error
        }
    }

    /// A failure's reason is the error's type name; a cancellation needs none.
    @usableFromInline
    static func measureReason(for error: any Error) -> String? {
        error is CancellationError ? nil : SpanExit.reason(for: error)
    }

    /// Milliseconds as a nanosecond budget; `nil` stays `nil` (record every time), negative and
    /// NaN budgets become zero, huge ones saturate.
    @inlinable @inline(__always)
    static func budgetNanos(_ ms: Double?) -> UInt64? {
        guard let ms else { return nil }
        guard ms > 0 else { return 0 }
        return ms >= 1.8e13 ? UInt64.max : UInt64(ms * 1_000_000)
    }
}
