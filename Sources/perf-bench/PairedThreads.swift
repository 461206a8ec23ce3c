// Two benchmark threads that run batches on command, alone or together: the 2-thread rows'
// engine (see SpanContentionBenchmarks.scaling).
import Foundation
import Synchronization

/// Two threads, each running batches of its own loop when told: one alone while the other sleeps
/// in a semaphore wait (an idle CPU, not a spinning one), or both at once, released together.
/// Each returns its batch's cost per operation. Thread i runs on CPU i when `pinned`.
final class PairedThreads: @unchecked Sendable {
    private enum Command { case alone, together, stop }

    let pinned: Bool
    private let iterations: Int
    private let go = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
    private let done = DispatchSemaphore(value: 0)
    private let stopped = DispatchGroup()
    /// Threads at the together batch's start line; both spin there until it reads 2, so neither
    /// runs part of its batch alone while the other is still waking.
    private let arrived = Atomic<Int>(0)
    // Written by the caller before it signals `go`, read by the thread after its wait (the
    // semaphore orders them); each thread writes only its own sample (two separate words, not an
    // Array both would mutate) before it signals `done`.
    private var command = Command.stop
    private let samples = UnsafeMutablePointer<Double>.allocate(capacity: 2)

    init(pinned: Bool, iterations: Int, loop: @escaping @Sendable (Int) -> @Sendable (Int) -> Void) {
        self.pinned = pinned
        self.iterations = iterations
        samples.initialize(repeating: 0, count: 2)
        for index in 0..<2 {
            stopped.enter()
            let thread = Thread { [self] in
                if pinned { CPUPinning.pin(to: index) }
                let body = loop(index)
                body(min(iterations, 1000))  // warm-up
                run(index, body)
                stopped.leave()
            }
            thread.start()
        }
    }

    private func run(_ index: Int, _ body: (Int) -> Void) {
        while true {
            go[index].wait()
            switch command {
            case .stop: return
            case .together:
                arrived.add(1, ordering: .acquiringAndReleasing)
                while arrived.load(ordering: .acquiring) < 2 {}
            case .alone: break
            }
            let start = Bench.now()
            body(iterations)
            samples[index] = Double(Bench.now() - start) / Double(iterations)
            done.signal()
        }
    }

    /// Thread `index`'s batch, the other thread asleep.
    func alone(_ index: Int) -> Double {
        command = .alone
        go[index].signal()
        done.wait()
        return samples[index]
    }

    /// Both threads' batches, run at once.
    func together() -> [Double] {
        command = .together
        arrived.store(0, ordering: .releasing)
        go[0].signal()
        go[1].signal()
        done.wait()
        done.wait()
        return [samples[0], samples[1]]
    }

    /// Ends both threads and waits for them.
    func stop() {
        command = .stop
        go[0].signal()
        go[1].signal()
        stopped.wait()
    }

    deinit { samples.deallocate() }
}
