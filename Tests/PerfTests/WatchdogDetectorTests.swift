// Deterministic tests of the hang detector: simulated time, no sleeps.
import PerfTestSupport
import Testing

@testable import Perf

@Suite struct WatchdogDetectorTests {
    @Test func sigstopOnALoadedQueueIsSuppressedNotAHang() {
        var simulation = WatchdogSimulation()
        simulation.loadMs = 5
        simulation.stops = [SimInterval(start: 2_010, end: 4_010)]
        let result = simulation.run(untilMs: 6_000)
        #expect(result.ended.count == 1)
        #expect(result.ended.allSatisfy { $0.suppressed == .stopped })
        #expect(result.ended.first.map { $0.durationNanos < 120_000_000 } == true)
        #expect(result.ongoing.isEmpty)
    }

    @Test(arguments: [0 as UInt64, 1, 25, 49])
    func stopAtAnyPhaseOfTheScheduleIsSuppressed(phaseMs: UInt64) {
        // A stop that begins just before, at or after a scheduled wake-up: the attribution must
        // hold at every phase, not only the convenient one.
        var simulation = WatchdogSimulation()
        simulation.loadMs = 8
        simulation.stops = [SimInterval(start: 2_000 + phaseMs, end: 4_000 + phaseMs)]
        let result = simulation.run(untilMs: 6_000)
        #expect(result.ended.filter { $0.suppressed == nil }.isEmpty, "phase \(phaseMs): \(result.ended)")
        #expect(result.ended.count == 1)
    }

    @Test func realHangWithAStopInItsMiddleIsAHangAnnotatedWithTheStall() throws {
        var simulation = WatchdogSimulation()
        simulation.blocks = [SimInterval(start: 2_020, end: 5_020)]
        simulation.stops = [SimInterval(start: 2_500, end: 4_500)]
        let result = simulation.run(untilMs: 7_000)
        #expect(result.ended.count == 1)
        let episode = try #require(result.ended.first)
        #expect(episode.kind == .hang)
        #expect(episode.suppressed == nil)
        #expect(abs(Double(episode.stallNanos) / 1e6 - 2_000) <= 60)
        #expect(abs(Double(episode.durationNanos) / 1e6 - 1_000) <= 30)
        // The observed bounds include the stop; the estimate does not.
        #expect(episode.lowerNanos >= 2_900_000_000 && episode.upperNanos <= 3_100_000_000)
    }

    @Test(arguments: [150 as UInt64, 300, 1_000, 3_000])
    func boundsBracketAnInjectedBlock(durationMs: UInt64) throws {
        var simulation = WatchdogSimulation()
        simulation.blocks = [SimInterval(start: 2_013, end: 2_013 + durationMs)]
        let result = simulation.run(untilMs: 2_013 + durationMs + 1_000)
        #expect(result.ended.count == 1)
        let episode = try #require(result.ended.first)
        #expect(episode.kind == (durationMs >= 250 ? .hang : .hitch))
        #expect(episode.lowerNanos <= durationMs * 1_000_000 + 1_000_000)
        #expect(episode.upperNanos + 1_000_000 >= durationMs * 1_000_000)
        #expect(abs(Double(episode.durationNanos) / 1e6 - Double(durationMs)) <= 25)
        #expect(episode.stallNanos == 0)
    }

    @Test func backlogAfterAHangMergesIntoOneEpisode() throws {
        var simulation = WatchdogSimulation()
        // A 600 ms hang, then backlog that keeps the next two pings slow.
        simulation.blocks = [
            SimInterval(start: 2_000, end: 2_590), SimInterval(start: 2_591, end: 2_820),
            SimInterval(start: 2_850, end: 2_990),
        ]
        let result = simulation.run(untilMs: 4_000)
        #expect(
            result.ended.count == 1, "\(result.ended.map { ($0.lowerNanos / 1_000_000, $0.upperNanos / 1_000_000) })")
        let episode = try #require(result.ended.first)
        #expect(episode.kind == .hang)
        #expect(episode.upperNanos >= 900_000_000)
    }

    @Test func pauseDropsEpisodesUntilResume() throws {
        var simulation = WatchdogSimulation()
        simulation.pauses = [SimInterval(start: 1_900, end: 3_000)]
        simulation.blocks = [SimInterval(start: 2_000, end: 2_800), SimInterval(start: 4_000, end: 4_400)]
        let result = simulation.run(untilMs: 5_000)
        #expect(result.ended.count == 1)
        let episode = try #require(result.ended.first)
        #expect(abs(Double(episode.durationNanos) / 1e6 - 400) <= 25)
    }

    @Test(arguments: [true, false])
    func attachedDebuggerSuppressesWhenConfigured(suppress: Bool) throws {
        var simulation = WatchdogSimulation()
        simulation.configuration.suppressWhenDebugging = suppress
        simulation.debugger.attached = true
        simulation.blocks = [SimInterval(start: 2_000, end: 2_400)]
        let result = simulation.run(untilMs: 3_000)
        let episode = try #require(result.ended.first)
        #expect(episode.suppressed == (suppress ? .debugger : nil))
        #expect(episode.kind == .hang)
    }

    /// gdb attached during a hang and detached before its end: TracerPid is read when
    /// the episode opens and at its samples, not only at the end, so the hang is still marked.
    @Test func aDebuggerAttachedOnlyDuringTheHangIsSeen() throws {
        var simulation = WatchdogSimulation()
        simulation.blocks = [SimInterval(start: 2_000, end: 5_000)]
        simulation.debuggerAttachedDuring = [SimInterval(start: 2_100, end: 3_500)]
        let result = simulation.run(untilMs: 6_000)
        let episode = try #require(result.ended.first)
        #expect(result.ended.count == 1)
        #expect(episode.suppressed == .debugger)

        // Attached and detached between two hangs: neither is marked.
        var between = WatchdogSimulation()
        between.blocks = [SimInterval(start: 2_000, end: 2_400), SimInterval(start: 4_000, end: 4_400)]
        between.debuggerAttachedDuring = [SimInterval(start: 3_000, end: 3_500)]
        let clean = between.run(untilMs: 5_000)
        #expect(clean.ended.count == 2)
        #expect(clean.ended.allSatisfy { $0.suppressed == nil })
    }

    @Test func hostSuspendIsNamed() throws {
        var simulation = WatchdogSimulation()
        simulation.loadMs = 5
        simulation.stops = [SimInterval(start: 2_010, end: 3_010)]
        simulation.suspends = [SimInterval(start: 2_010, end: 3_010)]
        let result = simulation.run(untilMs: 4_000)
        #expect(result.ended.map(\.suppressed) == [.suspend])
    }

    @Test func samplesOngoingAndFatalFollowTheSchedule() throws {
        var simulation = WatchdogSimulation()
        simulation.configuration.fatalAfter = .milliseconds(1_500)
        simulation.blocks = [SimInterval(start: 2_000, end: 4_000)]
        let result = simulation.run(untilMs: 5_000)
        let episode = try #require(result.ended.first)
        #expect(result.samples.count == 4)
        #expect(result.samples.allSatisfy { $0.episode == episode.id })
        let offsets = result.samples.map { $0.atMs - 2_000 }
        #expect(offsets == [150, 400, 650, 900])
        // In progress from 1 s on, then kept current (every tick, or 5 % of the length when
        // longer) so a kill leaves a fatal hang within 10 % of its real length.
        #expect(result.ongoing.count >= 15)
        #expect(result.ongoing.allSatisfy { $0.id == episode.id && $0.inProgress })
        #expect(result.ongoing.first.map { $0.lowerNanos >= 1_000_000_000 } == true)
        let reported = result.ongoing.map(\.lowerNanos)
        for (earlier, later) in zip(reported, reported.dropFirst()) {
            #expect(later > earlier)
            #expect(later - earlier <= max(50_000_000, earlier / 20) + 50_000_000, "a refresh came late")
        }
        #expect(reported.last.map { $0 >= 1_850_000_000 } == true, "the last report is within 10 % of the 2 s hang")
        #expect(result.fatal.count == 1)
        #expect(episode.fatal)
        #expect(episode.samplesTaken == 4)
    }

    @Test func startupGraceHidesEarlyEpisodes() {
        var configuration = Perf.HangWatchdog.Configuration()
        configuration.startupGrace = .seconds(1)
        var detector = HangDetector(timing: HangTiming(configuration), startNanos: 0, debuggerAttached: { false })
        let ms: UInt64 = 1_000_000
        var ended: [HangDetection] = []
        var sequence: UInt64 = 0
        // Ping sent at 50 ms, answered only at 700 ms, inside the grace period.
        for now in stride(from: 50 as UInt64, through: 1_000, by: 50) {
            let served = now >= 750 ? ServedPing(sequence: sequence, servedNanos: 700 * ms, tid: 1) : nil
            let output = detector.tick(HangTick(now: now * ms, scheduled: now * ms, served: served))
            if let next = output.sendPing { sequence = next }
            ended += output.ended
        }
        #expect(ended.isEmpty)
    }

    @Test func randomisedStopsNeverBlameTheQueueAndRealBlocksAreBracketed() {
        let seed = SeededRandom.makeSeed()
        var rng = SeededRandom(seed: seed)
        for round in 0..<40 {
            var simulation = WatchdogSimulation()
            simulation.loadMs = rng.next() % 20
            let stopStart = 1_000 + rng.next() % 500
            simulation.stops = [SimInterval(start: stopStart, end: stopStart + 300 + rng.next() % 2_500)]
            let blockStart = 5_000 + rng.next() % 500
            let blockMs = 300 + rng.next() % 1_500
            simulation.blocks = [SimInterval(start: blockStart, end: blockStart + blockMs)]
            let result = simulation.run(untilMs: 8_000)
            let blamed = result.ended.filter { $0.suppressed == nil }
            #expect(blamed.count == 1, "seed \(seed) round \(round): \(result.ended)")
            if let episode = blamed.first {
                let actual = Double(blockMs + simulation.loadMs)
                #expect(
                    Double(episode.lowerNanos) / 1e6 <= actual + 1 && Double(episode.upperNanos) / 1e6 >= actual - 1,
                    "seed \(seed) round \(round): \(episode) for \(actual) ms")
            }
        }
    }
}

@Suite struct WatchdogSupportTests {
    @Test func stallLogOverlapCountsOnlyTheWindow() {
        // Each wake-up may be up to 10 ms late (waiting for a core) before the rest counts as a stall.
        var log = StallLog(capacity: 4)
        log.record(scheduled: 100, actual: 100 + 12_000_000)  // 2 ms past the allowance
        log.record(scheduled: 20_000_000, actual: 28_000_000)  // within the allowance: not a stall
        log.record(scheduled: 40_000_000, actual: 40_000_000 + 10_500_000)  // past it by less than the floor
        log.record(scheduled: 60_000_000, actual: 75_000_000)  // 5 ms past the allowance
        #expect(log.overlap(from: 0, to: 100_000_000) == 7_000_000)
        #expect(log.overlap(from: 11_000_100, to: 72_000_000) == 1_000_000 + 2_000_000)
        #expect(log.longest(from: 0, to: 100_000_000) == 5_000_000)
    }

    @Test func culpritCooldownLimitsFullRecordsPerCulprit() {
        var cooldown = CulpritCooldown(cooldownNanos: 30_000_000_000)
        let decisions = [
            cooldown.admit(culprit: "a", now: 1),
            cooldown.admit(culprit: "a", now: 10_000_000_000),
            cooldown.admit(culprit: "b", now: 10_000_000_000),
            cooldown.admit(culprit: "a", now: 30_000_000_002),
            cooldown.admit(culprit: nil, now: 1),
            cooldown.admit(culprit: nil, now: 2),
        ]
        #expect(decisions == [true, false, true, true, true, false])
    }

    @Test func demanglesSwiftSymbolsAndLeavesOthers() {
        #expect(Symbolicator.demangle("$sSi") == "Swift.Int")
        #expect(Symbolicator.demangle("memcpy") == "memcpy")
    }

    @Test func stuckFramesAreThoseInEverySampleAndTheCulpritSkipsSystemFrames() {
        func frame(_ name: String, system: Bool = false) -> Perf.HangWatchdog.Frame {
            Perf.HangWatchdog.Frame(
                address: UInt(name.utf8.count), symbol: name, offset: 0, image: system ? "libc.so.6" : "app",
                isSystem: system)
        }
        let first = [frame("nanosleep", system: true), frame("load"), frame("main")]
        let second = [frame("nanosleep", system: true), frame("parse"), frame("load"), frame("main")]
        let (stuck, culprit) = StackAnalysis.stuckFrames([first, second])
        #expect(stuck.map(\.symbol) == ["nanosleep", "load", "main"])
        #expect(culprit?.symbol == "load")
        // A sample that missed the program's frames does not cost the culprit.
        let cut = [frame("nanosleep", system: true), frame("__libc_start_main", system: true)]
        #expect(StackAnalysis.stuckFrames([first, cut]).culprit?.symbol == "load")
        // ... nor the stuck frames: they come from the samples that hold the program's code.
        #expect(StackAnalysis.stuckFrames([first, cut]).stuck.map(\.symbol) == ["nanosleep", "load", "main"])
        #expect(
            StackAnalysis.stuckFrames([second, cut, second]).stuck.map(\.symbol) == [
                "nanosleep", "parse", "load", "main",
            ])
        #expect(StackAnalysis.stuckFrames([cut, cut]).stuck.map(\.symbol) == ["nanosleep", "__libc_start_main"])
        #expect(StackAnalysis.stuckFrames([second, second, cut]).culprit?.symbol == "parse")
        #expect(StackAnalysis.stuckFrames([cut, cut]).culprit == nil)
    }

    /// An optimised build folds functions with identical bodies into one `merged` function: it is
    /// the code that blocked, not glue to skip for its caller.
    @Test func aMergedFunctionIsTheCulpritNotItsCaller() {
        let stack = [
            Self.frame("usleep", system: true),
            Self.frame(
                "merged function signature specialization <Arg[1] = Dead> of barsPerf.barsBlockedFunction(ms: Swift.Int) -> ()"
            ),
            Self.frame("barsPerf.run() -> ()"), Self.frame("__libc_start_main", system: true),
        ]
        let culprit = StackAnalysis.stuckFrames([stack, stack]).culprit
        #expect(culprit == stack[1])
        let symbol = culprit?.symbol.map(SymbolNames.readable) ?? ""
        #expect(symbol == "merged barsPerf.barsBlockedFunction(ms: Swift.Int) -> ()")
        #expect(SymbolNames.marked(symbol) == ("barsPerf.barsBlockedFunction(ms: Swift.Int) -> ()", .merged))
    }

    /// A function inlined into a thunk or a closure's `partial apply` leaves only glue of the
    /// program on the stack: the culprit is that glue, marked a thunk, never none.
    @Test func aStackOfOnlyThunksNamesTheNearestThunkThatNamesAFunction() {
        let reabstraction = Self.frame(
            "reabstraction thunk helper from @escaping @callee_guaranteed () -> () to @escaping @callee_unowned @convention(block) () -> ()"
        )
        let partialApply = Self.frame("partial apply for closure #1 () -> () in service.main() -> ()")
        let stack = [
            Self.frame("clock_nanosleep", system: true), reabstraction, partialApply,
            Self.frame("thunk for @escaping @callee_guaranteed @Sendable () -> ()"),
            Self.frame("_dispatch_call_block_and_release", system: true),
            Self.frame("start_thread", system: true),
        ]
        let culprit = StackAnalysis.stuckFrames([stack, stack]).culprit
        #expect(culprit == partialApply, "one naming the program's function comes before a type-only thunk")
        let symbol = culprit?.symbol.map(SymbolNames.readable) ?? ""
        #expect(SymbolNames.marked(symbol) == ("closure #1 () -> () in service.main() -> ()", .thunk))

        let typesOnly = [stack[0], reabstraction, stack[4], stack[5]]
        #expect(StackAnalysis.stuckFrames([typesOnly]).culprit == reabstraction)
        #expect(SymbolNames.mark(reabstraction.symbol ?? "") == .thunk)
        // A real frame of the program still comes first, however far out.
        let withCode = stack.dropLast() + [Self.frame("service.main() -> ()"), stack[5]]
        #expect(StackAnalysis.stuckFrames([Array(withCode)]).culprit?.symbol == "service.main() -> ()")
        // Not a frame of the program at all: no culprit.
        #expect(StackAnalysis.stuckFrames([[stack[0], stack[4], stack[5]]]).culprit == nil)
    }

    private static func frame(_ name: String, system: Bool = false) -> Perf.HangWatchdog.Frame {
        Perf.HangWatchdog.Frame(
            address: UInt(name.utf8.count), symbol: name, offset: 0, image: system ? "libc.so.6" : "service",
            isSystem: system)
    }
}
