// "First, do no harm", measured: every kind of blocking call, 600 ms on the watched queue while
// the main thread and a bystander make the same call for 1 s, once with the watchdog (and Perf)
// on and once without (`perf-test-child watchdog-matrix`). With the watchdog on, no call may be
// cut short and each block must give exactly one hang line that brackets it, names the blocking
// function and says what it waited for; no signal may go to a thread blocked in a system call.
import Foundation
import Glibc
import PerfTestSupport
import Testing

@testable import Perf

extension PerfGlobalStateTests {
    @Suite struct WatchdogMatrixTests {
        /// What the hang line's `wait` must mention, per kind (nil: a running thread has none).
        private static let expectedWait: [String: [String]] = [
            "cpu": [], "usleep": ["nanosleep"], "nanosleep": ["nanosleep"], "poll": ["poll"], "select": ["select"],
            "epoll": ["epoll"], "pipe-read": ["read(fd", "pipe "], "socket-read": ["read(fd", "socket "],
            "semaphore": ["futex"], "condition": ["futex"],
            "mutex": ["futex", "pthread mutex held by", "matrixMutexHolder"],
            "dispatch-semaphore": ["futex"], "thread-sleep": ["nanosleep"], "queue-sync": ["nanosleep"],
        ]

        private struct Outcome: Equatable {
            var role: String
            var result: Int
            var error: Int
        }

        private struct Case {
            var kind: String
            var function: String
            var startedMs: Int64
            var endedMs: Int64
            var calls: [[String: Any]]
            var signals: Int
            var withWatchdog: Bool
        }

        private func runMatrix(watchdog: Bool, directory: URL, extra: [String] = []) throws -> [Case] {
            let (lines, status) = try ChildProcess.run(
                BuildProducts.testChild, ["watchdog-matrix", watchdog ? "on" : "off", directory.path] + extra)
            #expect(ChildProcess.exitedNormally(status) && ChildProcess.exitCode(status) == 0)
            #expect(lines.last == "done", "the child ran to its end")
            return lines.compactMap { line -> Case? in
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    let kind = object["kind"] as? String
                else { return nil }
                return Case(
                    kind: kind, function: object["function"] as? String ?? "?",
                    startedMs: (object["startedMs"] as? NSNumber)?.int64Value ?? 0,
                    endedMs: (object["endedMs"] as? NSNumber)?.int64Value ?? 0,
                    calls: object["calls"] as? [[String: Any]] ?? [], signals: (object["signals"] as? Int) ?? 0,
                    withWatchdog: watchdog)
            }
        }

        /// A call's duration from its CLOCK_MONOTONIC start and end.
        /// How much earlier than requested a call may return on its own. hrtimer-based waits
        /// (sleeps, poll, futex, epoll) end at or after their deadline; SO_RCVTIMEO counts in
        /// scheduler ticks from wherever the current tick stood, so it may end up to one tick
        /// (10 ms at the lowest HZ, 100) early: a 2000 ms timeout was seen ending after 1998.5 ms
        /// with EAGAIN, its own timeout, which the test then also requires.
        private static func earlyToleranceMs(_ kind: String) -> Double {
            kind == "socket-read" ? 10.5 : 0.5
        }

        private static func elapsedMs(_ call: [String: Any]) -> Double {
            let start = (call["startNs"] as? NSNumber)?.uint64Value ?? 0
            let end = (call["endNs"] as? NSNumber)?.uint64Value ?? 0
            return end > start ? Double(end - start) / 1e6 : 0
        }

        private func outcomes(_ calls: [[String: Any]]) -> [Outcome] {
            calls.map {
                Outcome(
                    role: $0["role"] as? String ?? "", result: $0["result"] as? Int ?? -100,
                    error: $0["errno"] as? Int ?? -100)
            }.sorted { $0.role < $1.role }
        }

        @Test func everyKindOfBlockIsMeasuredWithoutDisturbingTheProgram() throws {
            let directory = try TemporaryDirectory("watchdog-matrix")
            defer { directory.remove() }
            let off = try runMatrix(watchdog: false, directory: directory.url.appendingPathComponent("off"))
            let on = try runMatrix(watchdog: true, directory: directory.url)
            #expect(on.count == WatchdogMatrixTests.expectedWait.count && off.count == on.count)
            for (withWatchdog, without) in zip(on, off) {
                #expect(outcomes(withWatchdog.calls) == outcomes(without.calls), "\(withWatchdog.kind): results differ")
            }
            try check(on + off, hangsIn: directory.url)
        }

        /// The main queue (drained by `dispatchMain()`), the main actor and the cooperative pool
        /// (every pool thread blocked): hosts that spin, sleep, poll and read.
        @Test(arguments: ["main", "mainActor", "pool"])
        func everyTargetIsMeasuredWithoutDisturbingTheProgram(target: String) throws {
            let directory = try TemporaryDirectory("watchdog-targets")
            defer { directory.remove() }
            let on = try runMatrix(
                watchdog: true, directory: directory.url, extra: ["cpu,usleep,poll,pipe-read", "target=\(target)"])
            #expect(on.map(\.kind) == ["cpu", "usleep", "poll", "pipe-read"])
            try check(on, hangsIn: directory.url, target: target)
        }

        /// The program's own calls ran to their end, never with EINTR; each block of a run with the
        /// watchdog gave exactly one hang line that brackets it, names the blocking function and
        /// says what it waited for, and no thread blocked in a system call was signalled.
        private func check(_ cases: [Case], hangsIn directory: URL, target: String = "queue") throws {
            let (events, _) = try LedgerReader(directory: directory).readAll()
            let hangs = events.filter { $0.kind == .hang }
            // The span sampler read every call's thread while it was past its budget, blocked or
            // spinning, beside the watchdog.
            let sampled = events.filter { $0.kind == .span && $0.name == "matrix.call" }
            let callsWithPerf = cases.filter(\.withWatchdog).reduce(0) { $0 + $1.calls.count }
            #expect(sampled.count == callsWithPerf, "\(target): one line per measured call")
            for line in sampled {
                let profile = line.profile
                #expect(
                    (profile?.samples ?? 0) > 0,
                    "\(target): a call's span was not sampled: \(String(describing: profile)) \(line.durationMs ?? 0) ms"
                )
            }
            for run in cases {
                let kind = run.kind
                for call in run.calls {
                    let elapsed = Self.elapsedMs(call)
                    let requested = Double(call["requestedMs"] as? Int ?? 0)
                    #expect(
                        elapsed >= requested - Self.earlyToleranceMs(kind),
                        "\(target) \(kind): a call returned early: \(call)")
                    if kind == "socket-read" {
                        #expect(call["errno"] as? Int == Int(EAGAIN), "\(target) \(kind): not its own timeout: \(call)")
                    }
                    #expect(call["errno"] as? Int != Int(EINTR), "\(target) \(kind): EINTR: \(call)")
                }
                guard run.withWatchdog else { continue }
                // No signal to a thread blocked in a system call (only spinning blocks may get one).
                if kind != "cpu" { #expect(run.signals == 0, "\(target) \(kind): \(run.signals) signals") }
                let window = hangs.filter { $0.timestampMs >= run.startedMs && $0.timestampMs <= run.endedMs }
                #expect(window.count == 1, "\(target) \(kind): \(window.count) hang lines: \(window)")
                // The target is stuck while every watched block runs (the pool has one per thread).
                let watched = run.calls.filter { $0["role"] as? String == "watched" }
                let starts = watched.compactMap { ($0["startNs"] as? NSNumber)?.uint64Value }
                let ends = watched.compactMap { ($0["endNs"] as? NSNumber)?.uint64Value }
                guard let hang = window.first, let start = starts.max(), let end = ends.min(), end > start,
                    starts.count == watched.count, ends.count == watched.count
                else {
                    Issue.record("\(target) \(kind): no hang line or no watched block: \(run.calls)")
                    continue
                }
                let blockMs = Double(end - start) / 1e6
                // The block starts somewhere between the last answered ping and the late one, so the
                // bounds' midpoint is within half that window: ±25 ms at a 50 ms interval, wider by
                // however late the host let the watchdog thread send its ping.
                let duration = try #require(hang.durationMs)
                let lower = try #require(hang.lowerMs)
                let upper = try #require(hang.upperMs)
                let midpoint = (lower + upper) / 2
                let halfWindow = max(25, (upper - lower) / 2)
                // Serving the ping after the block takes well under 1 ms, except when the CPU kind's
                // three spinners share two cores: then the serving thread can wait a scheduler slice.
                let serve = kind == "cpu" ? 15.0 : 1.0
                #expect(
                    abs(midpoint - blockMs) <= halfWindow + serve, "\(target) \(kind): \(midpoint) ms for \(blockMs) ms"
                )
                // The estimate is that midpoint less the watchdog's own stall (time it could not
                // run, which is not blamed on the target): with the CPU kind's three spinners on two
                // cores the watchdog thread waits for the CPU, and CI once saw 519 ms for a 600 ms
                // block with the bounds bracketing it. The ledger rounds each figure to 0.1 ms, and
                // the lower check sums three roundings of up to 0.05 ms (estimate, midpoint, stall):
                // 0.15 ms at a tie, so 0.2 ms of slack leaves floating point its room.
                let stall = hang.stallMs ?? 0
                #expect(
                    duration <= midpoint + 0.2 && duration >= midpoint - stall - 0.2,
                    "\(target) \(kind): estimate \(duration) ms, bounds' midpoint \(midpoint) ms, stall \(stall) ms")
                #expect(lower <= blockMs + serve && blockMs <= upper + 1, "\(target) \(kind): \(hang)")
                #expect(
                    hang.culprit?.contains(run.function) == true,
                    "\(target) \(kind): culprit \(hang.culprit ?? "none"), thread \(hang.thread ?? "-"), \(hang.extra)")
                let wait: String?
                if case .string(let text) = hang.extra["wait"] { wait = text } else { wait = nil }
                let expected = try #require(WatchdogMatrixTests.expectedWait[kind])
                if expected.isEmpty {
                    #expect(wait == nil, "\(target) \(kind): \(wait ?? "")")
                } else {
                    for needle in expected {
                        #expect(
                            wait?.contains(needle) == true, "\(target) \(kind): wait \(wait ?? "none") lacks \(needle)")
                    }
                }
            }
        }
    }
}
