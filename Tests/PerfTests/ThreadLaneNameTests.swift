// Thread names in the flight recorder's `threads` block, which the trace and HTML exporters use
// as lane names: the whole name where Perf knows it, not the kernel's 15-byte `comm`.
import CPerfShims
import Dispatch
import Foundation
import Glibc
import PerfCore
import PerfTestSupport
import Synchronization
import Testing

@testable import Perf

extension PerfGlobalStateTests {
    @Suite struct ThreadLaneNameTests {
        /// Installs Perf in memory with a flight recorder (the caller shuts it down).
        private func install() {
            let configuration = Perf.Configuration(recording: .disabled, flightRecorderCapacity: 4096)
            #expect(Perf.install(configuration, environment: [:], clock: SystemClock(), report: { _ in }))
        }

        /// The name the flight recorder's snapshot gives `tid`.
        private func laneName(_ tid: Int32) -> String? { Perf.recentSpans()?.threads[tid] }

        /// The kernel's name of a thread of this process.
        private func comm(_ tid: Int32) -> String {
            let text = (try? String(contentsOfFile: "/proc/self/task/\(tid)/comm", encoding: .utf8)) ?? ""
            return text.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// Ends a span on `queue` and returns the thread that ended it.
        private func endSpan(on queue: DispatchQueue, _ name: StaticString) async -> Int32 {
            await withCheckedContinuation { continuation in
                queue.async {
                    Perf.begin(name, slowMs: 60_000).end()
                    continuation.resume(returning: perf_gettid())
                }
            }
        }

        /// Foundation's `Thread.name` keeps no name over 15 bytes on Linux; `Perf.nameCurrentThread`
        /// keeps all of it, while the kernel gets what fits.
        @Test func aThreadWithALongNameShowsAllOfIt() async throws {
            install()
            defer { Perf.shutdown() }
            let name = "perf.lanes.named-worker-thread"
            let tid = Mutex<Int32>(0)
            let release = DispatchSemaphore(value: 0)
            let thread = Thread {
                Perf.nameCurrentThread(name)
                Perf.begin("lanes.named", slowMs: 60_000).end()
                tid.withLock { $0 = perf_gettid() }
                release.wait()
            }
            thread.start()
            defer { release.signal() }
            #expect(try await waitUntil(seconds: 10) { tid.withLock { $0 } != 0 })
            let id = tid.withLock { $0 }
            #expect(comm(id) == "perf.lanes.name")
            #expect(laneName(id) == name)
        }

        @Test func aGlobalQueueWorkerShowsItsRootQueuesWholeLabel() async throws {
            install()
            defer { Perf.shutdown() }
            let tid = await endSpan(on: .global(qos: .utility), "lanes.global")
            // libdispatch names its workers after the last 15 bytes of their root queue.
            #expect(comm(tid) == "oot.utility-qos")
            #expect(laneName(tid) == "com.apple.root.utility-qos")
        }

        /// A thread named after the last 15 bytes of the queue it runs (as libdispatch names its
        /// workers) ends its first span there: the once-per-thread hook sees the whole label.
        @Test func aThreadNamedAfterTheQueueItRunsShowsTheQueuesWholeLabel() async throws {
            install()
            defer { Perf.shutdown() }
            let label = "perf.lanes.queue-whose-label-the-thread-was-cut-from"
            let queue = DispatchQueue(label: label)
            let tid = Mutex<Int32>(0)
            let thread = Thread {
                perf_name_current_thread(String(decoding: label.utf8.suffix(15), as: UTF8.self))
                queue.sync { Perf.begin("lanes.hooked", slowMs: 60_000).end() }
                tid.withLock { $0 = perf_gettid() }
            }
            thread.start()
            #expect(try await waitUntil(seconds: 10) { tid.withLock { $0 } != 0 })
            let id = tid.withLock { $0 }
            #expect(laneName(id) == label)
        }

        /// A pool worker that answered a watched queue's ping runs other spans later: its lane is
        /// named after its root queue, never the queue, so the queue's name claims no span it did
        /// not run.
        @Test func aPoolWorkerThatServedAWatchedQueueIsNotNamedAfterIt() async throws {
            install()
            defer { Perf.shutdown() }
            let label = "perf.lanes.watched-queue-with-a-long-label"
            let queue = DispatchQueue(label: label)
            var configuration = Perf.HangWatchdog.Configuration()
            configuration.interval = .milliseconds(10)
            configuration.hitchThreshold = .seconds(30)
            configuration.hangThreshold = .seconds(60)
            let watchdog = Perf.HangWatchdog(monitoring: .queue(queue), configuration: configuration)
            watchdog.start()
            defer { watchdog.stop() }
            #expect(try await waitUntil(seconds: 10) { watchdog.statistics.pingsSent >= 3 })
            // Spans on the queue until one ended on a thread the watchdog has seen serve it (and
            // so would name after the queue, were it to name pool workers).
            var tids: Set<Int32> = []
            var served: Int32?
            let deadline = DispatchTime.now().uptimeNanoseconds + 10_000_000_000
            while served == nil, DispatchTime.now().uptimeNanoseconds < deadline {
                tids.insert(await endSpan(on: queue, "lanes.watched"))
                served = tids.first { !ThreadNames.shared.wouldServe(label, tid: $0) }
                if served == nil { try await Task.sleep(nanoseconds: 5_000_000) }
            }
            let tid = try #require(served, "lanes: \(tids.map { "\($0): \(laneName($0) ?? "-")" })")
            #expect(ThreadNames.isPoolWorker(comm: comm(tid)), "\(comm(tid))")
            let lane = try #require(laneName(tid))
            #expect(!lane.contains(label), "\(lane)")
            #expect(lane.hasPrefix("com.apple.root.") || ThreadNames.isPoolWorker(comm: lane), "\(lane)")
        }

        /// Foundation's `Thread.name`, set on the running thread, reaches the kernel (15 bytes):
        /// the lane keeps it after the thread exited, where it used to read `thread <tid>`. The
        /// setter does nothing until `start()` has returned on the starting thread (it names the
        /// handle `start()` stores), so the thread waits for that first.
        @Test func aFoundationThreadNameOutlivesTheThread() async throws {
            install()
            defer { Perf.shutdown() }
            let tid = try await endSpanAndExit { Thread.current.name = "worker-0" }
            #expect(laneName(tid) == "worker-0")
        }

        /// The same for a name set with `pthread_setname_np` (through the C shim that calls it:
        /// Glibc's Swift module does not export it).
        @Test func aPthreadNameOutlivesTheThread() async throws {
            install()
            defer { Perf.shutdown() }
            let tid = try await endSpanAndExit { perf_name_current_thread("pt-worker-1") }
            #expect(laneName(tid) == "pt-worker-1")
        }

        /// Runs `name` then a span's end on a new thread, waits until that thread has exited, and
        /// returns its id.
        private func endSpanAndExit(_ name: @escaping @Sendable () -> Void) async throws -> Int32 {
            let tid = Mutex<Int32>(0)
            let started = DispatchSemaphore(value: 0)
            let thread = Thread {
                started.wait()
                name()
                Perf.begin("lanes.exited", slowMs: 60_000).end()
                tid.withLock { $0 = perf_gettid() }
            }
            thread.start()
            started.signal()
            #expect(try await waitUntil(seconds: 10) { tid.withLock { $0 } != 0 })
            let id = tid.withLock { $0 }
            #expect(
                try await waitUntil(seconds: 10) { !FileManager.default.fileExists(atPath: "/proc/self/task/\(id)") },
                "thread \(id) did not exit")
            return id
        }
    }
}
