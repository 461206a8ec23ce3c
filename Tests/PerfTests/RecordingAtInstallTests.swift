// What install says about the consent gate, in the build the tests were compiled as: CI runs this
// suite in its release step too (`--filter PerfGlobalStateTests`), where `.auto` records nothing.
import Foundation
import PerfCore
import PerfTestSupport
import Testing

@testable import Perf

extension PerfGlobalStateTests {
    @Suite struct RecordingAtInstallTests {
        /// `.auto` with `PERF_RECORDING` unset: a release build writes nothing and says so once per
        /// install that takes effect (a repeated install while installed says nothing, an install
        /// after shutdown says it again); a debug build records and says nothing.
        @Test func autoSaysOncePerInstallWhenItLeavesRecordingOff() throws {
            let directory = try TemporaryDirectory("recording-auto")
            defer { directory.remove() }
            let messages = MessageBox()
            let configuration = Perf.Configuration(
                directory: directory.url, app: Perf.AppInfo(name: "recording-auto"), recording: .auto)
            Perf.shutdown()
            #expect(Perf.install(configuration, environment: [:], clock: SystemClock(), report: messages.append))
            defer { Perf.shutdown() }
            #expect(!Perf.install(configuration, environment: [:], clock: SystemClock(), report: messages.append))
            let recordedFirst = Perf.dataDirectory != nil
            let afterFirst = messages.all
            Perf.shutdown()
            #expect(Perf.install(configuration, environment: [:], clock: SystemClock(), report: messages.append))
            let recordedSecond = Perf.dataDirectory != nil
            Perf.shutdown()
            if InstallPolicy.isDebugBuild {
                #expect(recordedFirst && recordedSecond)
                #expect(messages.all.isEmpty, "\(messages.all)")
            } else {
                #expect(!recordedFirst && !recordedSecond)
                #expect(afterFirst == [InstallPolicy.autoOffInRelease])
                #expect(messages.all == [InstallPolicy.autoOffInRelease, InstallPolicy.autoOffInRelease])
                #expect(!FileManager.default.fileExists(atPath: directory.ledger.path))
            }
        }

        /// Recording off by choice, the program's or the environment's, is not news; `PERF_RECORDING=1`
        /// turns `.auto` on in either build, silently.
        @Test(arguments: [
            (Perf.Recording.disabled, [String: String](), false),
            (.auto, ["PERF_RECORDING": "0"], false),
            (.enabled, ["PERF_RECORDING": "off"], false),
            (.auto, ["PERF_RECORDING": "1"], true),
        ])
        func aChosenGateSaysNothing(recording: Perf.Recording, environment: [String: String], records: Bool) throws {
            let directory = try TemporaryDirectory("recording-chosen")
            defer { directory.remove() }
            let messages = MessageBox()
            let configuration = Perf.Configuration(
                directory: directory.url, app: Perf.AppInfo(name: "recording-chosen"), recording: recording)
            Perf.shutdown()
            #expect(
                Perf.install(configuration, environment: environment, clock: SystemClock(), report: messages.append))
            defer { Perf.shutdown() }
            #expect((Perf.dataDirectory != nil) == records)
            Perf.shutdown()
            #expect(messages.all.isEmpty, "\(messages.all)")
        }
    }
}
