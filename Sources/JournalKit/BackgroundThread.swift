// One thread per journal for the work an append hands off (close a retired segment, arm the
// reaper, prepare the next segment), scheduled SCHED_BATCH so that waking it never preempts
// the appending thread.
import Dispatch
import Foundation
import Glibc
import Synchronization

/// A serial worker whose wake-up costs the waker a futex wake, not the worker's whole job.
///
/// Measured on a loaded 2-core machine (perf-bench's rotation row): handing the per-segment
/// work to a dispatch queue cost the append that did it 65–107 µs median, because the woken
/// worker (a fresh sleeper) preempted the appender on its own core and ran the background job
/// first. A SCHED_BATCH thread is never a wake-up preemptor, so the appender carries on and the
/// job runs on the other core or at the next tick: that append fell to 3–9 µs median in four
/// runs of six (in the other two, ~100 µs, with the disk stalling every append for
/// milliseconds).
final class BackgroundThread: Sendable {
    private struct Mailbox {
        var work: [@Sendable () -> Void] = []
        var stopped = false
    }

    private let mailbox = Mutex(Mailbox())
    private let wake = DispatchSemaphore(value: 0)

    /// Starts the thread; it runs until ``stop()`` and then finishes the work already sent.
    init(name: String) {
        let thread = Thread { [self] in
            var parameters = sched_param()
            // SCHED_BATCH (3 in <bits/sched.h>); unprivileged, and nothing is lost if it fails.
            _ = sched_setscheduler(0, 3, &parameters)
            run()
        }
        thread.name = name
        thread.start()
    }

    /// Runs `work` on the thread, after the work sent before it.
    func async(_ work: @escaping @Sendable () -> Void) {
        mailbox.withLock { $0.work.append(work) }
        wake.signal()
    }

    /// Lets the thread exit once the work already sent is done.
    func stop() {
        mailbox.withLock { $0.stopped = true }
        wake.signal()
    }

    private func run() {
        while true {
            wake.wait()
            let (work, stopped) = mailbox.withLock { mailbox -> ([@Sendable () -> Void], Bool) in
                defer { mailbox.work.removeAll() }
                return (mailbox.work, mailbox.stopped)
            }
            for item in work { item() }
            if stopped { return }
        }
    }
}
