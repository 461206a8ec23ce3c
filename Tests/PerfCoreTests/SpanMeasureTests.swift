// measure: exits derived from return, throw and cancellation, sync and async.
import PerfCore
import Testing

private struct PaymentDeclined: Error {
    let cardNumber: String
}

private actor Counter {
    var value = 0

    func measuredIncrement(_ recorder: SpanRecorder) async -> Int {
        // Mutating actor state inside the closure compiles only because measure keeps our isolation.
        await recorder.measure("counter.increment", budgetNanos: nil, site: CallSite()) {
            value += 1
            await Task.yield()
            return value
        }
    }
}

@Suite struct SpanMeasureTests {
    @Test func syncReturnIsSuccess() throws {
        let harness = SpanHarness()
        let value = harness.recorder.measure("sync.ok", budgetNanos: nil, site: CallSite()) { 42 }
        #expect(value == 42)
        let end = try #require(harness.records.first?.spanEnd)
        #expect(end.exit == .success)
        #expect(end.reason == nil)
    }

    @Test func syncThrowIsFailureWithTypeNameOnly() throws {
        let harness = SpanHarness()
        #expect(throws: PaymentDeclined.self) {
            try harness.recorder.measure("sync.throw", budgetNanos: nil, site: CallSite()) {
                throw PaymentDeclined(cardNumber: "4111 1111 1111 1111")
            }
        }
        let end = try #require(harness.records.first?.spanEnd)
        #expect(end.exit == .failure)
        #expect(end.reason == "PaymentDeclined")
    }

    @Test func syncCancellationErrorIsCancelled() throws {
        let harness = SpanHarness()
        #expect(throws: CancellationError.self) {
            try harness.recorder.measure("sync.cancel", budgetNanos: nil, site: CallSite()) {
                throw CancellationError()
            }
        }
        #expect(harness.records.first?.spanEnd?.exit == .cancelled)
    }

    @Test func typedThrowsArePreserved() {
        let harness = SpanHarness()
        let result = Result { () throws(PaymentDeclined) -> Int in
            try harness.recorder.measure("typed", budgetNanos: nil, site: CallSite()) { () throws(PaymentDeclined) in
                throw PaymentDeclined(cardNumber: "x")
            }
        }
        #expect(throws: PaymentDeclined.self) { try result.get() }
    }

    @Test func asyncReturnIsSuccessAndKeepsIsolation() async throws {
        let harness = SpanHarness()
        let counter = Counter()
        #expect(await counter.measuredIncrement(harness.recorder) == 1)
        #expect(await counter.measuredIncrement(harness.recorder) == 2)
        #expect(harness.records.compactMap(\.spanEnd).map(\.exit) == [.success, .success])
    }

    @Test func asyncThrowIsFailure() async throws {
        let harness = SpanHarness()
        await #expect(throws: PaymentDeclined.self) {
            try await harness.recorder.measure("async.throw", budgetNanos: nil, site: CallSite()) {
                await Task.yield()
                throw PaymentDeclined(cardNumber: "x")
            }
        }
        let end = try #require(harness.records.first?.spanEnd)
        #expect(end.exit == .failure)
        #expect(end.reason == "PaymentDeclined")
    }

    @Test func asyncCancellationIsCancelled() async throws {
        let harness = SpanHarness()
        let task = Task {
            try await harness.recorder.measure("async.cancel", budgetNanos: nil, site: CallSite()) {
                withUnsafeCurrentTask { $0?.cancel() }
                await Task.yield()
                try Task.checkCancellation()
            }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        let end = try #require(harness.records.first?.spanEnd)
        #expect(end.exit == .cancelled)
        #expect(end.reason == nil)
    }
}
