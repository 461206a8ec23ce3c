// What an episode's stackQuality says must match what its stack holds: a stack read in full that
// never reaches the program's code (a DispatchSemaphore.wait unwound no further than the runtime)
// names no culprit and is not `full`.
import Testing

@testable import Perf

@Suite struct WatchdogStackQualityTests {
    static func sample(frames: Int, truncated: Bool = false) -> ThreadSample {
        ThreadSample(
            tid: 42, addresses: (0..<frames).map { UInt(0x1000 + $0) }, truncated: truncated,
            thread: Perf.HangWatchdog.ThreadInfo(tid: 42, name: "worker", state: nil, waitChannel: nil),
            syscall: nil, signalled: false)
    }

    static func judge(
        expected: Int = 2, taken: [ThreadSample]?, failure: String? = nil, namesCulprit: Bool
    ) -> Perf.HangWatchdog.StackQuality {
        EpisodeRecorder.judgeQuality(
            samplesExpected: expected, tid: 42, taken: taken, failure: failure, samplerUnavailable: nil,
            namesCulprit: namesCulprit)
    }

    @Test func everySampleReachingProgramCodeIsFull() {
        #expect(Self.judge(taken: [Self.sample(frames: 12), Self.sample(frames: 12)], namesCulprit: true) == .full)
    }

    @Test func aStackWithoutProgramCodeIsPartialAndSaysWhy() {
        let quality = Self.judge(taken: [Self.sample(frames: 7), Self.sample(frames: 7)], namesCulprit: false)
        #expect(quality == .partial(reason: "no frame of the program's code in 7 frames of thread 42"))
    }

    @Test func missingFailedAndTruncatedSamplesStayAsBefore() {
        #expect(
            Self.judge(expected: 3, taken: [Self.sample(frames: 5)], namesCulprit: true)
                == .partial(reason: "1 of 3 samples of thread 42"))
        #expect(
            Self.judge(taken: [Self.sample(frames: 5)], failure: "process_vm_readv: EPERM", namesCulprit: true)
                == .partial(reason: "process_vm_readv: EPERM"))
        if case .partial = Self.judge(taken: [Self.sample(frames: 5, truncated: true)], namesCulprit: true) {
        } else {
            Issue.record("a truncated stack must be partial")
        }
        #expect(
            Self.judge(expected: 0, taken: nil, namesCulprit: false)
                == .unavailable(reason: "the episode ended before the first stack sample"))
        #expect(
            Self.judge(taken: nil, failure: "thread exited", namesCulprit: false)
                == .unavailable(reason: "thread exited"))
    }
}
