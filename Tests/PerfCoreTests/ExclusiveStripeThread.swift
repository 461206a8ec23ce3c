// A thread that owns an exclusive histogram stripe, for tests of what only such a thread does.
import CPerfShims
import Foundation
import Testing

/// A thread holding one of the `PERF_EXCLUSIVE_STRIPES` histogram stripes for as long as this
/// value lives, running the closures it is given one at a time.
///
/// A thread keeps the stripe it takes first until it exits, so a test cannot count on the thread
/// it runs on: a long-lived pool thread that first recorded while other tests' threads held all
/// the exclusive stripes shares for good (stop 34's CI failure). ``start(timeout:)`` starts fresh
/// threads until one gets an exclusive stripe (they come back as those threads exit), and cancels
/// the test, which is then reported as such and never as a pass, when none does in time.
///
/// Assertions belong on the test's own thread: an expectation that fails on another thread is
/// not attributed to its test.
final class ExclusiveStripeThread: Sendable {
    /// What the thread and its handle share, guarded by `condition`.
    private final class State: @unchecked Sendable {
        let condition = NSCondition()
        var stripe: UInt32?
        var job: (@Sendable () -> Void)?
        var stopping = false
    }

    private let state: State
    /// The stripe index the thread owns, below `PERF_EXCLUSIVE_STRIPES`.
    let stripe: UInt32

    private init(state: State, stripe: UInt32) {
        self.state = state
        self.stripe = stripe
    }

    deinit {
        Self.stop(state)
    }

    /// A fresh thread with an exclusive stripe; cancels the calling test when none is had within
    /// `timeout`.
    static func start(timeout: Duration = .seconds(30)) throws -> ExclusiveStripeThread {
        let deadline = ContinuousClock.now + timeout
        var attempts = 0
        while true {
            attempts += 1
            let state = State()
            let stripe = launch(state)
            if stripe < PERF_EXCLUSIVE_STRIPES { return ExclusiveStripeThread(state: state, stripe: stripe) }
            stop(state)
            if ContinuousClock.now >= deadline {
                try Test.cancel(
                    "no fresh thread got one of the \(PERF_EXCLUSIVE_STRIPES) exclusive histogram stripes in \(attempts) attempts over \(timeout)"
                )
            }
            usleep(2_000)  // a poll interval while other tests' threads hold every exclusive stripe
        }
    }

    /// Runs `body` on the thread and returns its result once it has run.
    @discardableResult
    func run<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        let result = ResultBox<T>()
        state.condition.lock()
        state.job = { result.value = body() }
        state.condition.broadcast()
        while state.job != nil { state.condition.wait() }
        state.condition.unlock()
        return result.value!
    }

    /// Starts the thread and returns the stripe index it took.
    private static func launch(_ state: State) -> UInt32 {
        Thread {
            let stripe = perf_thread_stripe()
            state.condition.lock()
            state.stripe = stripe
            state.condition.broadcast()
            while true {
                while state.job == nil && !state.stopping { state.condition.wait() }
                guard let job = state.job else { break }
                state.condition.unlock()
                job()
                state.condition.lock()
                state.job = nil
                state.condition.broadcast()
            }
            state.condition.unlock()
        }.start()
        state.condition.lock()
        defer { state.condition.unlock() }
        while state.stripe == nil { state.condition.wait() }
        return state.stripe!
    }

    private static func stop(_ state: State) {
        state.condition.lock()
        state.stopping = true
        state.condition.broadcast()
        state.condition.unlock()
    }

    /// A result handed from the thread to the caller, which reads it only after the hand-over
    /// under `condition`.
    private final class ResultBox<T>: @unchecked Sendable {
        var value: T?
    }
}
