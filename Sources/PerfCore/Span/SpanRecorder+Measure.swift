// measure: a span around a closure, its exit derived from how the closure left.

extension SpanRecorder {
    /// Runs `body` inside a scoped span.
    ///
    /// The exit is derived: a return is `success`, a thrown `CancellationError` is `cancelled`,
    /// any other error is `failure` with the error's type name as the reason (never its message,
    /// which may carry user content). The error is rethrown unchanged.
    ///
    /// - Parameters:
    ///   - name: The span's name.
    ///   - budgetNanos: Recorded when it runs past this; `nil` records every time.
    ///   - site: Where the span begins.
    ///   - body: The work.
    @inlinable
    public func measure<Result, Failure: Error>(
        _ name: StaticString, budgetNanos: UInt64?, site: CallSite, _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let token = begin(name, budgetNanos: budgetNanos, site: site)
        do {
            let result = try body()
            end(token)
            return result
        } catch {
            end(token, exit: SpanExit.derived(from: error), reason: Self.reason(for: error))
            throw error
        }
    }

    /// Runs async `body` inside a scoped span, on the caller's isolation.
    ///
    /// Exits are derived as in the synchronous form.
    ///
    /// - Parameters:
    ///   - name: The span's name.
    ///   - budgetNanos: Recorded when it runs past this; `nil` records every time.
    ///   - site: Where the span begins.
    ///   - isolation: The caller's actor, so `body` needs no `Sendable` result or captures.
    ///   - body: The work.
    @inlinable
    public func measure<Result, Failure: Error>(
        _ name: StaticString, budgetNanos: UInt64?, site: CallSite, isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        let token = begin(name, budgetNanos: budgetNanos, site: site)
        do {
            let result = try await body()
            end(token)
            return result
        } catch {
            end(token, exit: SpanExit.derived(from: error), reason: Self.reason(for: error))
            throw error
        }
    }

    /// A failure's reason is the error's type name; a cancellation needs none.
    @usableFromInline
    static func reason(for error: any Error) -> String? {
        error is CancellationError ? nil : SpanExit.reason(for: error)
    }
}
