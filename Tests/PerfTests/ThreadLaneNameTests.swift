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

        /// The watchdog learns which thread answers its pings: a worker that served the watched
        /// queue is named after it, not `-qos.overcommit`.
        @Test func aWatchedQueuesServingThreadShowsTheQueueLabel() async throws {
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
            // Spans on the queue until one ended on a thread the watchdog saw serve it.
            var tids: Set<Int32> = []
            var named: Int32?
            let deadline = DispatchTime.now().uptimeNanoseconds + 10_000_000_000
            while named == nil, DispatchTime.now().uptimeNanoseconds < deadline {
                tids.insert(await endSpan(on: queue, "lanes.watched"))
                let threads = Perf.recentSpans()?.threads ?? [:]
                // A pool thread that served other watched queues earlier in the run (the table is
                // process-wide) carries their names too, joined by ", ".
                named = tids.first { threads[$0]?.components(separatedBy: ", ").contains(label) == true }
                if named == nil { try await Task.sleep(nanoseconds: 5_000_000) }
            }
            let tid = try #require(named, "lanes: \(tids.map { "\($0): \(laneName($0) ?? "-")" })")
            #expect(comm(tid) != label)
        }
    }
}
