// Scoped and keyed spans: what is recorded, supersede ordering, unmatched ends, shutdown.
import PerfCore
import Testing

@Suite struct SpanRecorderTests {
    @Test func underBudgetScopedSpanEmitsNothing() {
        let harness = SpanHarness()
        let token = harness.recorder.begin("fast", budgetNanos: 10 * millisecond, site: CallSite())
        harness.clock.advance(byMilliseconds: 10)
        harness.recorder.end(token)
        #expect(harness.records.isEmpty)
        #expect(harness.recorder.openSpanCount == 0)
    }

    @Test func overBudgetScopedSpanRecordsItsFields() throws {
        let harness = SpanHarness()
        let line: UInt32 = #line
        let token = harness.recorder.begin("slow", budgetNanos: 10 * millisecond, site: CallSite(line: line))
        harness.clock.advance(byMilliseconds: 11)
        harness.recorder.end(token, detail: "/v1/threads", count: 200)
        let end = try #require(harness.records.first?.spanEnd)
        #expect(harness.records.count == 1)
        #expect(end.id == 0)
        #expect(end.name == "slow")
        #expect(end.site == "PerfCoreTests/SpanRecorderTests.swift:\(line)")
        #expect(end.durationNanos == 11 * millisecond)
        #expect(end.budgetNanos == 10 * millisecond)
        #expect(end.startWallNanos == harness.clock.wallNanos() - 11 * millisecond)
        #expect(end.exit == .success)
        #expect(end.detail == "/v1/threads")
        #expect(end.count == 200)
        #expect(end.isOverBudgetOrAlwaysRecorded)
    }

    @Test func spanWithoutBudgetIsRecordedEveryTime() {
        let harness = SpanHarness()
        for _ in 0..<3 {
            harness.recorder.end(harness.recorder.begin("always", budgetNanos: nil, site: CallSite()))
        }
        #expect(harness.records.compactMap(\.spanEnd).map(\.durationNanos) == [0, 0, 0])
        #expect(harness.records.compactMap(\.spanEnd).allSatisfy { $0.budgetNanos == nil })
    }

    @Test func tokenReportsItsBudget() {
        let harness = SpanHarness()
        #expect(harness.recorder.begin("a", budgetNanos: 5, site: CallSite()).budgetNanos == 5)
        #expect(harness.recorder.begin("b", budgetNanos: nil, site: CallSite()).budgetNanos == nil)
        #expect(harness.recorder.begin("c", budgetNanos: .max, site: CallSite()).budgetNanos == .max)
        #expect(!harness.recorder.begin("d", budgetNanos: 5, site: CallSite()).isRegistered)
    }

    @Test func reBeginSupersedesAndRecordsItAfterTheNewBegin() throws {
        let harness = SpanHarness()
        let first = harness.recorder.begin(key: "thread-7", "feed.open", budgetNanos: nil, site: CallSite())
        harness.clock.advance(byMilliseconds: 3)
        let second = harness.recorder.begin(key: "thread-7", "feed.open", budgetNanos: nil, site: CallSite())
        let records = harness.records
        #expect(records.count == 3)
        #expect(records[0].spanBegin?.id == first.id)
        #expect(records[1].spanBegin?.id == second.id)
        let superseded = try #require(records[2].spanEnd)
        #expect(superseded.id == first.id)
        #expect(superseded.exit == .superseded)
        #expect(superseded.durationNanos == 3 * millisecond)
        #expect(
            harness.observer.events == [
                .began(first.id, "thread-7"), .began(second.id, "thread-7"), .closed(first.id, .superseded),
            ])
        #expect(harness.recorder.openSpanCount == 1)

        harness.recorder.end(first)
        #expect(harness.records.count == 3, "ending a superseded token again records nothing")
        harness.recorder.end(key: "thread-7", detail: "done")
        #expect(harness.records.last?.spanEnd?.id == second.id)
        #expect(harness.records.last?.spanEnd?.exit == .success)
        #expect(harness.records.last?.spanEnd?.detail == "done")
        #expect(harness.recorder.openSpanCount == 0)
    }

    @Test func endWithoutBeginIsReported() {
        let harness = SpanHarness()
        harness.recorder.end(key: "never-begun")
        harness.recorder.begin(key: "once", "x", budgetNanos: nil, site: CallSite())
        harness.recorder.end(key: "once")
        harness.recorder.end(key: "once")
        let unmatched = harness.records.compactMap { record -> String? in
            if case .unmatchedEnd(let end) = record { return end.key }
            return nil
        }
        #expect(unmatched == ["never-begun", "once"])
    }

    @Test func closeAllClosesEveryRegisteredSpan() {
        let harness = SpanHarness()
        let bounded = harness.recorder.begin(
            "upload", budgetNanos: nil, lifetime: .bounded(budgetNanos: 1_000 * millisecond), site: CallSite())
        let indefinite = harness.recorder.begin("session", budgetNanos: nil, lifetime: .indefinite, site: CallSite())
        harness.recorder.begin(key: "k", "keyed", budgetNanos: nil, site: CallSite())
        #expect(harness.recorder.openSpanCount == 3)
        #expect(harness.timer.armedDeadline != nil)
        harness.recorder.closeAll(exit: .cancelled)
        #expect(harness.recorder.openSpanCount == 0)
        #expect(harness.timer.armedDeadline == nil)
        let ends = harness.records.compactMap(\.spanEnd)
        #expect(ends.count == 3)
        #expect(ends.allSatisfy { $0.exit == .cancelled })
        #expect(Set(ends.map(\.id)).isSuperset(of: [bounded.id, indefinite.id]))
    }

    @Test func registeredSpanAlwaysPairsItsEnd() throws {
        let harness = SpanHarness()
        let token = harness.recorder.begin(
            "job", budgetNanos: 50 * millisecond, lifetime: .indefinite, site: CallSite())
        harness.clock.advance(byMilliseconds: 1)
        harness.recorder.end(token, exit: .failure, reason: "IOError")
        let end = try #require(harness.records.last?.spanEnd)
        #expect(harness.records.first?.spanBegin?.id == token.id)
        #expect(end.id == token.id)
        #expect(end.exit == .failure)
        #expect(end.reason == "IOError")
        #expect(!end.isOverBudgetOrAlwaysRecorded, "a sink keeping only slow spans can tell it apart")
    }
}
