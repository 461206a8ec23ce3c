// A measured span past its budget is sampled: its over-budget line says where its thread was.
// Real threads, a real clock and the real sampler: a thread blocked in a socket read is read
// from /proc (with its wait and the socket's peer), a spinning one through SIGPROF.
import CPerfShims
import Foundation
import Glibc
import PerfCore
import PerfReport
import PerfTestSupport
import Synchronization
import Testing

@testable import Perf

/// A read the sampler must name: not inlined, so its frame is on the stack.
@inline(never)
func samplingTestReadSlowly(_ fd: Int32) -> Int {
    var byte: UInt8 = 0
    return read(fd, &byte, 1)
}

/// A loop the sampler must name: it calls no function of the program's (the clock is libc's).
@inline(never)
func samplingTestSpin(untilNanos deadline: UInt64) -> UInt64 {
    var sum: UInt64 = 0
    var now = timespec()
    repeat {
        for _ in 0..<10_000 { sum &+= sum &* 31 &+ 7 }
        clock_gettime(CLOCK_MONOTONIC, &now)
    } while UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec) < deadline
    return sum
}

@inline(never)
func perf_monotonic_ns_for_tests() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

extension PerfGlobalStateTests {
    @Suite struct SpanSamplingTests {
        /// Installs with the real clock and a 5 ms sampling interval, runs `body`, shuts down and
        /// returns the ledger's span lines by name.
        private func recorded(_ body: () throws -> Void) throws -> [String: [LedgerEvent]] {
            let directory = try installSampling()
            defer { directory.remove() }
            try body()
            return try spanLines(in: directory)
        }

        private func recordedAsync(_ body: () async throws -> Void) async throws -> [String: [LedgerEvent]] {
            let directory = try installSampling()
            defer { directory.remove() }
            try await body()
            return try spanLines(in: directory)
        }

        private func installSampling() throws -> TemporaryDirectory {
            let directory = try TemporaryDirectory("span-sampling")
            var configuration = Perf.Configuration(
                directory: directory.url, app: Perf.AppInfo(name: "sampling-test"), recording: .enabled)
            configuration.sampleIntervalMs = 5
            Perf.shutdown()
            #expect(Perf.install(configuration, environment: [:], clock: SystemClock(), report: { _ in }))
            return directory
        }

        /// Shuts down, then reads the span lines with the package's own ledger reader.
        private func spanLines(in directory: TemporaryDirectory) throws -> [String: [LedgerEvent]] {
            Perf.shutdown()
            let events = try LedgerReader(directory: directory.url).readAll().events
            return Dictionary(grouping: events.filter { $0.kind == .span }, by: \.name)
        }

        /// A listening socket on 127.0.0.1 whose one client gets a byte after `delayMs`.
        private func slowServer(delayMs: UInt32) throws -> (port: UInt16, done: Thread) {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            try #require(listener >= 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(listener, $0, length) == 0 && listen(listener, 1) == 0
                        && getsockname(listener, $0, &length) == 0
                }
            }
            try #require(bound)
            let server = Thread {
                let client = accept(listener, nil, nil)
                // The delay starts at the client's request, made inside the span.
                var request: UInt8 = 0
                _ = read(client, &request, 1)
                usleep(delayMs * 1000)
                var byte: UInt8 = 42
                _ = write(client, &byte, 1)
                close(client)
                close(listener)
            }
            server.start()
            return (UInt16(bigEndian: address.sin_port), server)
        }

        private func connect(port: UInt16) throws -> Int32 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            address.sin_port = port.bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            try #require(connected == 0)
            return fd
        }

        /// More over-budget spans open at once than there are profile slots: each one past the
        /// slots is counted once however many ticks find it, and the report, the summary and the
        /// live metric say how many; with the lines that have a profile, they add up to every span.
        @Test func spansPastTheProfileSlotsAreCountedOnceInTheReport() throws {
            let extra = 6
            let count = ProfileSlots.defaultSlotCount + extra
            let directory = try installSampling()
            defer { directory.remove() }
            let gate = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for _ in 0..<count {
                group.enter()
                Thread {
                    Perf.measure("crowd.wait", slowMs: 1) { gate.wait() }
                    group.leave()
                }.start()
            }
            let sampler = try #require(PerfState.runtime()?.sampler)
            #expect(pollUntil(seconds: 30) { sampler.slots.dropped >= UInt64(extra) }, "\(sampler.slots.dropped)")
            // Ten more ticks find the same spans and count none of them again.
            let ticks = sampler.ticks
            #expect(pollUntil(seconds: 30) { sampler.ticks >= ticks + 10 })
            #expect(sampler.slots.dropped == UInt64(extra))
            let metric = "perf_dropped_span_profiles_total{app=\"sampling-test\"} \(extra)\n"
            #expect(Perf.prometheusText().contains(metric))
            for _ in 0..<count { gate.signal() }
            group.wait()
            let lines = try spanLines(in: directory)["crowd.wait"] ?? []
            #expect(lines.count == count)
            #expect(lines.filter { $0.profile != nil }.count == count - extra)
            let bytes = try ReportBuilder(directory: directory.url).build()
            let report = try PerformanceReport(bytes: bytes, path: "crowd.json")
            #expect(report.input?.droppedSpanProfiles == Int64(extra))
            let summary = try ReportSummary(bytes: bytes, path: "crowd.json")
            #expect(summary.text.contains("LOST: \(extra) over-budget spans not sampled"), "\(summary.text)")
        }

        /// Spans that end while the sampler takes a sample (the first can take milliseconds: it
        /// loads the symbol tables) still find a profile in their slot, the tick counted missed:
        /// every over-budget span of the tick is claimed before any thread is sampled.
        @Test func spansEndingDuringTheirFirstSampleKeepAProfileWithTheTickMissed() throws {
            Perf.shutdown()
            let slots = try #require(ProfileSlots.make(directory: nil, clock: SystemClock()))
            let ms: UInt64 = 1_000_000
            let start: UInt64 = 90_000 * ms
            let endNow = DispatchSemaphore(value: 0)
            let ended = DispatchSemaphore(value: 0)
            let taken = Mutex<[UInt64: SpanProfile?]>([:])
            let calls = Atomic<Int>(0)
            // The first sample, of whichever thread, ends both spans before it returns.
            let sampler = SpanSampler(slots: slots, intervalMs: 10, maxSamples: 200, clock: SystemClock()) { _, _ in
                if calls.add(1, ordering: .relaxed).newValue == 1 {
                    endNow.signal()
                    endNow.signal()
                    ended.wait()
                    ended.wait()
                }
                return (.failure(.notBlocked), true)
            }
            sampler.start(thread: false)
            defer { sampler.stop() }
            let ready = DispatchSemaphore(value: 0)
            for offset: UInt64 in [0, 1] {
                Thread {
                    _ = perf_sampled_push(start + offset, 10 * ms + 1, ChildScopes.nameWord("test.ends"))
                    ready.signal()
                    endNow.wait()
                    let ref = perf_sampled_pop()
                    let profile = ref == 0 ? nil : slots.take(ref, startNanos: start + offset)
                    taken.withLock { $0[offset] = profile }
                    ended.signal()
                }.start()
            }
            ready.wait()
            ready.wait()
            sampler.tick(now: start + 15 * ms)
            let profiles = taken.withLock { $0 }
            #expect(calls.load(ordering: .relaxed) >= 1)
            for offset: UInt64 in [0, 1] {
                let profile = try #require(profiles[offset] ?? nil, "span \(offset) ended with no profile")
                #expect(profile.samples == 0 && profile.missed == 1, "\(profile)")
            }
        }

        /// A span busy on the CPU may be signalled from its first over-budget tick: the tick an
        /// interval before its budget reads its thread's CPU time, which the next tick's share rule
        /// compares with. A thread blocked all along never may. Ticks are manual, at span-clock
        /// times the test picks; the CPU share is the threads' real one, so a spinner starved below
        /// a quarter of a core gets another try (5 in all), and one is enough.
        @Test func aSpinningSpanMaySignalFromItsFirstOverBudgetTick() throws {
            Perf.shutdown()
            let slots = try #require(ProfileSlots.make(directory: nil, clock: SystemClock()))
            let calls = Mutex<[(tid: Int32, maySignal: Bool)]>([])
            let sampler = SpanSampler(slots: slots, intervalMs: 10, maxSamples: 200, clock: SystemClock()) {
                tid, maySignal in
                calls.withLock { $0.append((tid, maySignal)) }
                return (.failure(.notBlocked), true)
            }
            sampler.start(thread: false)
            defer { sampler.stop() }
            let ms: UInt64 = 1_000_000
            var signalled = 0
            for attempt in 0..<5 {
                // Each attempt's spans begin at a time of their own: the sampler keys spans by start.
                let start = UInt64(attempt + 1) * 10_000 * ms
                let stop = Atomic<Bool>(false)
                let ready = DispatchSemaphore(value: 0)
                let done = DispatchSemaphore(value: 0)
                let tids = Mutex<(spinner: Int32, sleeper: Int32)>((0, 0))
                Thread {
                    _ = perf_sampled_push(start, 100 * ms + 1, ChildScopes.nameWord("test.spin"))
                    tids.withLock { $0.spinner = perf_gettid() }
                    ready.signal()
                    var sum: UInt64 = 0
                    while !stop.load(ordering: .relaxed) { sum &+= sum &* 31 &+ 7 }
                    _ = perf_sampled_pop()
                    if sum == 1 { print("") }  // keeps the loop
                    done.signal()
                }.start()
                Thread {
                    _ = perf_sampled_push(start, 100 * ms + 1, ChildScopes.nameWord("test.sleep"))
                    tids.withLock { $0.sleeper = perf_gettid() }
                    ready.signal()
                    while !stop.load(ordering: .relaxed) { usleep(1_000) }
                    _ = perf_sampled_pop()
                    done.signal()
                }.start()
                ready.wait()
                ready.wait()
                let (spinner, sleeper) = tids.withLock { $0 }
                calls.withLock { $0.removeAll() }
                // 35 ms before the budget the sampler sleeps until an interval before it (the
                // threshold is the budget + 1).
                #expect(sampler.tick(now: start + 65 * ms) == 25 * ms + 1)
                // 5 ms before the budget: nothing is sampled; both threads' CPU times are read.
                sampler.tick(now: start + 95 * ms)
                #expect(calls.withLock { $0.isEmpty })
                // Wait until the spinner has run 3 ms of CPU (a condition, not a sleep).
                let before = StackSampler.threadCPUNanos(spinner) ?? 0
                while (StackSampler.threadCPUNanos(spinner) ?? 0) < before + 3 * ms { sched_yield() }
                sampler.tick(now: start + 105 * ms)
                stop.store(true, ordering: .relaxed)
                done.wait()
                done.wait()
                let seen = calls.withLock { $0 }
                #expect(seen.filter { $0.tid == sleeper }.map(\.maySignal) == [false], "\(seen)")
                #expect(seen.filter { $0.tid == spinner }.count == 1, "\(seen)")
                if seen.contains(where: { $0.tid == spinner && $0.maySignal }) {
                    signalled += 1
                    break
                }
            }
            #expect(signalled == 1, "the spinner was never allowed a signal at its first over-budget tick")
        }

        @Test func aSpanBlockedInASocketReadNamesTheReadItsPeerAndItsCaller() throws {
            let (port, _) = try slowServer(delayMs: 300)
            let fd = try connect(port: port)
            defer { close(fd) }
            var got = 0
            let lines = try recorded {
                Perf.measure("db.query", slowMs: 20) {
                    var request: UInt8 = 1
                    _ = write(fd, &request, 1)
                    got = samplingTestReadSlowly(fd)
                }
            }
            #expect(got == 1)
            let profile = try #require(lines["db.query"]?.first?.profile, "the over-budget line has a profile")
            // About 280 ms past the budget at 5 ms a sample: 56 on an idle machine; a loaded one
            // (CI's sanitizer builds beside the tests) delays the sampler's ticks.
            #expect(profile.samples >= 5, "\(profile)")
            #expect(profile.top.reduce(0) { $0 + $1.count } == profile.samples, "the stacks' counts add up")
            let peer = "socket 127.0.0.1:\(port)"
            let named = profile.top.filter { stack in
                (stack.wait ?? "").hasPrefix("read(fd \(fd) → \(peer)")
                    && (stack.culprit ?? "").contains("samplingTestReadSlowly")
            }.reduce(0) { $0 + $1.count }
            #expect(named * 10 >= profile.samples * 8, "\(named) of \(profile.samples) name the read: \(profile.top)")
            #expect(profile.suspended == 0)
        }

        @Test func aSpinningSpanNamesTheSpinningFunction() throws {
            var sum: UInt64 = 0
            let lines = try recorded {
                Perf.measure("cpu.work", slowMs: 20) {
                    sum = samplingTestSpin(untilNanos: perf_monotonic_ns_for_tests() + 300_000_000)
                }
            }
            #expect(sum != 1)
            let profile = try #require(lines["cpu.work"]?.first?.profile, "the over-budget line has a profile")
            #expect(profile.samples >= 5, "\(profile)")
            let named = profile.top.filter { ($0.culprit ?? "").contains("samplingTestSpin") }.reduce(0) {
                $0 + $1.count
            }
            #expect(named * 10 >= profile.samples * 8, "\(named) of \(profile.samples) name the spin: \(profile.top)")
            #expect(profile.top.allSatisfy { $0.wait == nil || $0.culprit == SpanProfile.otherName })
        }

        @Test func anAsyncSpanAwaitingPastItsBudgetIsSuspendedNeverSampledFromOtherCode() async throws {
            // Another task keeps a thread busy meanwhile: a sample taken from whatever a thread
            // runs, rather than from the span's own jobs, would name it.
            let busy = Task.detached { samplingTestSpin(untilNanos: perf_monotonic_ns_for_tests() + 400_000_000) }
            let lines = try await recordedAsync {
                try await Perf.measure("async.wait", slowMs: 20) { try await Task.sleep(for: .milliseconds(300)) }
            }
            _ = await busy.value
            let profile = try #require(lines["async.wait"]?.first?.profile, "the over-budget line has a profile")
            #expect(profile.suspended >= 5, "\(profile)")
            #expect(profile.samples == 0 && profile.top.isEmpty, "nothing sampled while it awaited: \(profile)")
        }

        @Test func anAsyncSpanRunningOnAPoolThreadIsSampledThere() async throws {
            var sum: UInt64 = 0
            let lines = try await recordedAsync {
                sum = await Perf.measure("async.work", slowMs: 20) {
                    await Task.yield()
                    return samplingTestSpin(untilNanos: perf_monotonic_ns_for_tests() + 300_000_000)
                }
            }
            #expect(sum != 1)
            let profile = try #require(lines["async.work"]?.first?.profile, "the over-budget line has a profile")
            #expect(profile.samples >= 5, "\(profile)")
            let named = profile.top.filter { ($0.culprit ?? "").contains("samplingTestSpin") }.reduce(0) {
                $0 + $1.count
            }
            #expect(named * 10 >= profile.samples * 8, "\(named) of \(profile.samples) name the spin: \(profile.top)")
        }

        @Test func aSpanThatEndsBeforeATickFindsItHasNoProfile() throws {
            let lines = try recorded {
                for _ in 0..<1000 { Perf.measure("quick", slowMs: 1000) {} }
                Perf.measure("slow.but.unsampled", slowMs: 0) {}
            }
            #expect(lines["quick"] == nil)
            #expect(lines["slow.but.unsampled"]?.first?.profile == nil, "ended before any tick found it over budget")
        }
    }
}
