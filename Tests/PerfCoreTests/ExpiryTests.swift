// Span expiry and overdue with a manual clock and timer: time advances, nothing sleeps.
import Foundation
import PerfCore
import Synchronization
import Testing

@Suite struct ExpiryTests {
    @Test func boundedSpanExpiresAtItsDeadline() throws {
        let harness = SpanHarness()
        let start = harness.clock.monotonicNanos()
        let token = harness.recorder.begin(
            "upload", budgetNanos: nil, lifetime: .bounded(budgetNanos: 500 * millisecond), site: CallSite())
        #expect(harness.timer.armedDeadline == start + 500 * millisecond)
        #expect(!harness.advance(byMilliseconds: 499))
        #expect(harness.recorder.openSpanCount == 1)
        #expect(harness.advance(byMilliseconds: 1))
        #expect(harness.recorder.openSpanCount == 0)
        let end = try #require(harness.records.last?.spanEnd)
        #expect(end.id == token.id)
        #expect(end.exit == .expired)
        #expect(end.durationNanos == 500 * millisecond)
        #expect(harness.observer.events.last == .closed(token.id, .expired))
        #expect(harness.timer.armedDeadline == nil)

        harness.recorder.end(token)
        #expect(harness.records.count == 2, "an end after expiry records nothing more")
    }

    @Test func oneTimerIsArmedAtTheEarliestDeadline() {
        let harness = SpanHarness()
        let start = harness.clock.monotonicNanos()
        for lifetimeMs in [300, 100, 200] as [UInt64] {
            _ = harness.recorder.begin(
                "job", budgetNanos: nil, lifetime: .bounded(budgetNanos: lifetimeMs * millisecond), site: CallSite())
        }
        #expect(harness.timer.armedDeadline == start + 100 * millisecond)
        harness.advance(byMilliseconds: 100)
        #expect(harness.recorder.openSpanCount == 2)
        #expect(harness.timer.armedDeadline == start + 200 * millisecond)
        harness.advance(byMilliseconds: 100)
        #expect(harness.timer.armedDeadline == start + 300 * millisecond)
        harness.advance(byMilliseconds: 100)
        #expect(harness.recorder.openSpanCount == 0)
        #expect(harness.records.compactMap(\.spanEnd).map(\.exit) == [.expired, .expired, .expired])
    }

    @Test func overdueFiresOnceWhileOpenThenTheEndFollows() throws {
        let harness = SpanHarness()
        let token = harness.recorder.begin(key: "sync", "sync.run", budgetNanos: 100 * millisecond, site: CallSite())
        #expect(!harness.advance(byMilliseconds: 99))
        #expect(harness.advance(byMilliseconds: 51))
        let overdue = try #require(harness.records.last?.overdueRecord)
        #expect(overdue.id == token.id)
        #expect(overdue.openForNanos == 150 * millisecond)
        #expect(overdue.budgetNanos == 100 * millisecond)
        #expect(overdue.key == "sync")

        harness.timer.fire()
        harness.advance(byMilliseconds: 1_000)
        #expect(harness.records.compactMap(\.overdueRecord).count == 1, "overdue is reported once")
        harness.recorder.end(key: "sync")
        let kinds = harness.records.map { record -> String in
            switch record {
            case .spanBegan: "began"
            case .overdue: "overdue"
            case .spanEnded: "ended"
            default: "other"
            }
        }
        #expect(kinds == ["began", "overdue", "ended"])
    }

    @Test func overdueNeverFollowsTheEnd() {
        let harness = SpanHarness()
        let token = harness.recorder.begin(
            "quick", budgetNanos: 100 * millisecond, lifetime: .indefinite, site: CallSite())
        harness.clock.advance(byMilliseconds: 200)
        harness.recorder.end(token)
        harness.timer.fire()
        #expect(harness.records.compactMap(\.overdueRecord).isEmpty)
        #expect(harness.records.count == 2)
    }

    @Test func boundedBudgetedSpanIsOverdueThenExpired() {
        let harness = SpanHarness()
        _ = harness.recorder.begin(
            "import", budgetNanos: 100 * millisecond, lifetime: .bounded(budgetNanos: 300 * millisecond),
            site: CallSite())
        harness.advance(byMilliseconds: 100)
        harness.advance(byMilliseconds: 200)
        #expect(harness.records.compactMap(\.overdueRecord).count == 1)
        #expect(harness.records.last?.spanEnd?.exit == .expired)
        #expect(harness.recorder.openSpanCount == 0)
    }

    @Test func spuriousFireChangesNothing() {
        let harness = SpanHarness()
        _ = harness.recorder.begin(
            "idle", budgetNanos: 100 * millisecond, lifetime: .bounded(budgetNanos: 300 * millisecond),
            site: CallSite())
        let deadline = harness.timer.armedDeadline
        harness.timer.fire()
        #expect(harness.records.count == 1)
        #expect(harness.timer.armedDeadline == deadline)
    }

    /// The production timer: a bounded span on the system clock expires without anyone firing.
    @Test func dispatchTimerExpiresSpansOnTheSystemClock() async throws {
        let closed = ClosedSignal()
        let recorder = SpanRecorder(
            histograms: HistogramRegistry(), pipeline: RecordPipeline(), observers: [closed])
        let token = recorder.begin(
            "real", budgetNanos: nil, lifetime: .bounded(budgetNanos: 20 * millisecond), site: CallSite())
        let exit = closed.wait(timeoutSeconds: 10)
        #expect(exit == .expired)
        #expect(recorder.openSpanCount == 0)
        #expect(token.isRegistered)
    }
}

/// Signals a condition when a span closes, so the test waits on an event rather than a sleep.
private final class ClosedSignal: LongLivedSpanObserver, @unchecked Sendable {
    private let condition = NSCondition()
    private var exit: SpanExit?

    func spanBegan(_ span: OpenSpanInfo) {}

    func spanClosed(id: UInt64, exit: SpanExit) {
        condition.lock()
        self.exit = exit
        condition.broadcast()
        condition.unlock()
    }

    func wait(timeoutSeconds: Double) -> SpanExit? {
        let deadline = Date(timeIntervalSinceNow: timeoutSeconds)
        condition.lock()
        defer { condition.unlock() }
        while exit == nil && condition.wait(until: deadline) {}
        return exit
    }
}

@Suite struct ExpiryEdgeTests {
    @Test func budgetBeyondTheClockRangeNeverFires() {
        let harness = SpanHarness()
        let token = harness.recorder.begin(
            "forever", budgetNanos: .max, lifetime: .bounded(budgetNanos: .max), site: CallSite())
        #expect(harness.timer.armedDeadline == nil)
        harness.timer.fire()
        #expect(harness.recorder.openSpanCount == 1)
        #expect(harness.records.count == 1)
        harness.recorder.end(token)
        #expect(harness.records.last?.spanEnd?.exit == .success)
    }

    @Test func observerAddedLaterHearsLaterSpans() {
        let harness = SpanHarness()
        let early = harness.recorder.begin("early", budgetNanos: nil, lifetime: .indefinite, site: CallSite())
        let late = RecordingObserver()
        harness.recorder.addObserver(late)
        let next = harness.recorder.begin(key: "k", "next", budgetNanos: nil, site: CallSite())
        harness.recorder.end(early)
        harness.recorder.end(next)
        #expect(late.events == [.began(next.id, "k"), .closed(early.id, .success), .closed(next.id, .success)])
    }
}
