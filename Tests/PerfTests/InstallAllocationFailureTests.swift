// Install never crashes the host when memory cannot be had: each allocation Perf.install makes is
// failed on purpose (AllocationFaults) and install reports it on its message sink instead.
import Foundation
import PerfCore
import PerfTestSupport
import Synchronization
import Testing

@testable import Perf

extension PerfGlobalStateTests {
    @Suite struct InstallAllocationFailureTests {
        /// Installs with `faults` injected and returns whether install succeeded and what it reported.
        private func install(
            _ faults: AllocationFaults.Kinds, recording: Perf.Recording, directory: URL? = nil
        ) -> (installed: Bool, messages: [String]) {
            Perf.shutdown()
            let messages = Mutex<[String]>([])
            AllocationFaults.inject(faults)
            defer { AllocationFaults.reset() }
            let configuration = Perf.Configuration(
                directory: directory, app: Perf.AppInfo(name: "alloc-fail"), recording: recording)
            let installed = Perf.install(
                configuration, environment: [:], clock: SystemClock(),
                report: { message in messages.withLock { $0.append(message) } })
            return (installed, messages.withLock { $0 })
        }

        @Test func noSpanMemoryAtAllLeavesPerfUninstalledWithOneMessage() {
            let (installed, messages) = install(.anonymousMapping, recording: .disabled)
            defer { Perf.shutdown() }
            #expect(!installed)
            #expect(!Perf.isInstalled)
            #expect(messages.count == 1)
            #expect(messages.first?.contains("cannot map 1 MiB of anonymous memory") == true, "\(messages)")
            Perf.begin("alloc.inert", slowMs: 0).end()  // inert, no crash
            #expect(Perf.spanHistograms()["alloc.inert"] == nil)
        }

        @Test func noFlightRingRunsWithoutTheFlightRecorder() {
            let (installed, messages) = install(.flightRing, recording: .disabled)
            defer { Perf.shutdown() }
            #expect(installed)
            #expect(
                messages == [
                    "perf: cannot allocate the flight recorder; running without it (Perf.recentSpans() is nil)"
                ])
            Perf.begin("alloc.noring", slowMs: 60_000).end()
            #expect(Perf.recentSpans() == nil)
            #expect(Perf.spanHistograms()["alloc.noring"]?.count == 1)
        }

        /// Recording to disk: the file mapping and the anonymous fallback both fail; the ledger and
        /// journal opened before are closed again and nothing is left installed.
        @Test func recordingWithNoMemoryReportsBothAndStaysInert() throws {
            let directory = try TemporaryDirectory("alloc-fail")
            defer { directory.remove() }
            let (installed, messages) = install(
                [.fileMapping, .anonymousMapping], recording: .enabled, directory: directory.url)
            defer { Perf.shutdown() }
            #expect(!installed)
            #expect(!Perf.isInstalled)
            #expect(messages.contains { $0.hasPrefix("perf: span histograms will not survive a crash") }, "\(messages)")
            #expect(messages.contains { $0.contains("cannot map 1 MiB of anonymous memory") }, "\(messages)")
            // Installing again once memory is back works.
            let again = install([], recording: .disabled)
            #expect(again.installed)
            #expect(again.messages.isEmpty)
        }

        @Test func flightRecorderInitIsFailable() {
            AllocationFaults.inject(.flightRing)
            defer { AllocationFaults.reset() }
            #expect(FlightRecorder(capacity: 64) == nil)
        }
    }
}
