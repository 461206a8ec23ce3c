// The span clock (issue 17): who may use the TSC, the forced and automatic fallbacks, the
// calibration's decisions from fed pairs, and 10,000 spans of known length against CLOCK_MONOTONIC.
import CPerfShims
import PerfCore
import Testing

/// The reason the TSC path cannot be tested here, or `nil` when it can.
let spanClockIneligibility = SpanClockHost.system.ineligibility()

private func host(clocksource: String? = "tsc\n", cpuinfo: String? = eligibleCPUInfo, variable: String? = nil)
    -> SpanClockHost
{
    SpanClockHost(
        clocksource: { clocksource }, cpuinfo: { cpuinfo }, perfClockVariable: { variable }, tscSupported: true)
}

private let eligibleCPUInfo = """
    processor\t: 0
    vendor_id\t: GenuineIntel
    flags\t\t: fpu vme tsc msr constant_tsc rep_good nopl nonstop_tsc cpuid tsc_known_freq
    bugs\t\t: spectre_v1

    processor\t: 1
    flags\t\t: fpu
    """

@Suite struct SpanClockTests {
    @Test func eligibilityNeedsTSCClocksourceAndBothInvariantFlags() {
        #expect(SpanClockHost.ineligibility(tscSupported: true, clocksource: "tsc\n", cpuinfo: eligibleCPUInfo) == nil)
        #expect(
            SpanClockHost.ineligibility(tscSupported: false, clocksource: "tsc", cpuinfo: eligibleCPUInfo)
                == "no TSC on this architecture")
        #expect(
            SpanClockHost.ineligibility(tscSupported: true, clocksource: "kvm-clock\n", cpuinfo: eligibleCPUInfo)
                == "clocksource is kvm-clock, not tsc")
        #expect(
            SpanClockHost.ineligibility(tscSupported: true, clocksource: nil, cpuinfo: eligibleCPUInfo)
                == "clocksource unreadable")
        #expect(
            SpanClockHost.ineligibility(
                tscSupported: true, clocksource: "tsc", cpuinfo: "flags\t: tsc constant_tsc tsc_known_freq\n")
                == "CPU lacks nonstop_tsc")
        #expect(
            SpanClockHost.ineligibility(tscSupported: true, clocksource: "tsc", cpuinfo: "flags\t: tsc\n")
                == "CPU lacks constant_tsc and nonstop_tsc")
        // Substrings do not count: "nonstop_tsc_x" is not "nonstop_tsc".
        #expect(
            SpanClockHost.ineligibility(
                tscSupported: true, clocksource: "tsc", cpuinfo: "flags : constant_tsc nonstop_tsc_x\n")
                == "CPU lacks nonstop_tsc")
        #expect(
            SpanClockHost.ineligibility(tscSupported: true, clocksource: "tsc", cpuinfo: "processor : 0\n")
                == "no flags line in /proc/cpuinfo")
        #expect(host(variable: "monotonic").ineligibility() == "PERF_CLOCK=monotonic")
        #expect(host(variable: " Monotonic\n").ineligibility() == "PERF_CLOCK=monotonic")
        #expect(host(variable: "tsc").ineligibility() == nil)
    }

    @Test func forcedByTheEnvironmentReadsCLOCKMONOTONIC() {
        let clock = SpanClock(host: host(variable: "monotonic"))
        clock.start(recheckIntervalSeconds: nil)
        clock.recheck()
        #expect(clock.source == .monotonic(reason: "PERF_CLOCK=monotonic"))
        expectReadsMonotonic(clock)
    }

    @Test func ineligibleHostReadsCLOCKMONOTONIC() {
        let clock = SpanClock(host: host(clocksource: "hpet"))
        clock.start(recheckIntervalSeconds: nil)
        clock.recheck()
        #expect(clock.source == .monotonic(reason: "clocksource is hpet, not tsc"))
        expectReadsMonotonic(clock)
    }

    @Test func notEnabledBeforeTheFirstInterval() {
        let clock = SpanClock(host: host(), minimumIntervalNanos: 500_000_000)
        clock.start(anchor: (tsc: 1_000_000, mono: 1_000_000_000))
        clock.recheck(now: (tsc: 1_000_000 + 300_000_000, mono: 1_100_000_000))
        #expect(clock.source == .calibrating(reason: "first interval"))
        #expect(clock.nanosPerTick == nil)
        expectReadsMonotonic(clock)
    }

    /// Fed pairs at exactly 3 ticks per ns: enabled after the first interval, rebased on each
    /// re-check without a step, and back to CLOCK_MONOTONIC when the ratio moves 0.1 %.
    @Test func calibratesRebasesAndFallsBackOnDrift() {
        let clock = SpanClock(host: host(), minimumIntervalNanos: 500_000_000, maximumDrift: 5e-4)
        let anchor: (tsc: UInt64, mono: UInt64) = (tsc: 10_000_000_000, mono: 5_000_000_000)
        clock.start(anchor: anchor)
        clock.recheck(now: (tsc: anchor.tsc + 3_000_000_000, mono: anchor.mono + 1_000_000_000))
        #expect(clock.source == .tsc)
        #expect(abs((clock.nanosPerTick ?? 0) - 1.0 / 3.0) < 1e-12)
        #expect(clock.state.pointee.base_mono == anchor.mono + 1_000_000_000)

        clock.recheck(now: (tsc: anchor.tsc + 6_000_000_000, mono: anchor.mono + 2_000_000_000))
        #expect(clock.source == .tsc)
        #expect(abs(clock.largestStepNanos) <= 1)

        // A re-check 10 µs later whose pair is off by 1 µs (10 %) is too soon to judge: ignored.
        clock.recheck(now: (tsc: anchor.tsc + 6_000_030_000, mono: anchor.mono + 2_000_011_000))
        #expect(clock.source == .tsc)
        #expect(clock.state.pointee.base_mono == anchor.mono + 2_000_000_000)

        // 0.04 % slower over the next second: within the drift allowed, so it stays on.
        clock.recheck(now: (tsc: anchor.tsc + 9_000_000_000, mono: anchor.mono + 3_000_400_000))
        #expect(clock.source == .tsc)
        #expect(clock.largestStepNanos == 400_000)

        // 0.1 % over the next: fall back, then recalibrate from that pair.
        clock.recheck(now: (tsc: anchor.tsc + 12_000_000_000, mono: anchor.mono + 4_001_400_000))
        guard case .calibrating = clock.source else {
            Issue.record("expected a fallback, got \(clock.source)")
            return
        }
        #expect(clock.nanosPerTick == nil)
        expectReadsMonotonic(clock)
        clock.recheck(now: (tsc: anchor.tsc + 15_000_000_000, mono: anchor.mono + 5_002_400_000))
        #expect(clock.source == .tsc)
    }

    @Test func backwardsPairsFallBack() {
        let clock = SpanClock(host: host())
        clock.start(anchor: (tsc: 10_000_000_000, mono: 5_000_000_000))
        clock.recheck(now: (tsc: 9_000_000_000, mono: 6_000_000_000))
        #expect(clock.source == .calibrating(reason: "TSC or CLOCK_MONOTONIC went backwards"))
        expectReadsMonotonic(clock)
    }

    @Test(.enabled(if: spanClockIneligibility == nil, "the TSC is not eligible on this host"))
    func forcingTheFallbackAfterCalibrationReadsCLOCKMONOTONIC() {
        let clock = SpanClock(host: .system, minimumIntervalNanos: 50_000_000)
        clock.start(recheckIntervalSeconds: nil)
        clock.calibrateNow()
        #expect(clock.source == .tsc)
        clock.forceMonotonic(reason: "test")
        #expect(clock.source == .monotonic(reason: "test"))
        expectReadsMonotonic(clock)
        clock.recheck()
        #expect(clock.source == .monotonic(reason: "test"))
        clock.allowTSC(recheckIntervalSeconds: nil)
        clock.calibrateNow()
        #expect(clock.source == .tsc)
    }
}

/// Every read lies between two CLOCK_MONOTONIC reads around it: the fallback is that clock.
func expectReadsMonotonic(_ clock: SpanClock, reads: Int = 1_000) {
    var outside = 0
    for _ in 0..<reads {
        let before = perf_monotonic_ns()
        let value = clock.nanos()
        let after = perf_monotonic_ns()
        if value < before || value > after { outside += 1 }
    }
    #expect(outside == 0, "\(outside) of \(reads) reads were not CLOCK_MONOTONIC (\(clock.source))")
}
