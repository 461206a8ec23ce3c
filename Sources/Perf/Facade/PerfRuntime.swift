// Everything one `Perf.install` sets up: the span recorder and its pipeline, and, when recording,
// the ledger writer and the live session. Built off to the side, then published with one store.
import Foundation
import PerfCore
import Synchronization

/// The installed state of Perf.
final class PerfRuntime: Sendable {
    let configuration: Perf.Configuration
    let recorder: SpanRecorder
    let clock: any PerfClock
    let sessionID: String
    let noteFloor: NoteFloor
    /// Where files go, when recording to disk.
    let directory: URL?
    let ledger: LedgerWriter?
    let session: LiveSession?

    private init(
        configuration: Perf.Configuration, recorder: SpanRecorder, clock: any PerfClock, sessionID: String,
        directory: URL?, ledger: LedgerWriter?, session: LiveSession?
    ) {
        self.configuration = configuration
        self.recorder = recorder
        self.clock = clock
        self.sessionID = sessionID
        self.noteFloor = NoteFloor(floorSeconds: configuration.noteFloorSeconds)
        self.directory = directory
        self.ledger = ledger
        self.session = session
    }

    /// Builds a runtime. Never throws: a directory that cannot be used costs one message on
    /// `report` and recording continues in memory only.
    static func make(
        configuration: Perf.Configuration, environment: [String: String], clock: any PerfClock,
        histograms: HistogramRegistry, report: (String) -> Void
    ) -> PerfRuntime {
        let pipeline = RecordPipeline()
        let flight = configuration.flightRecorderCapacity > 0
            ? FlightRecorder(capacity: configuration.flightRecorderCapacity) : nil
        let recorder = SpanRecorder(histograms: histograms, pipeline: pipeline, clock: clock, flightRecorder: flight)
        let record = InstallPolicy.shouldRecord(
            configuration.recording, environment: environment, debugBuild: InstallPolicy.isDebugBuild)
        let info = SessionInfo(
            pid: getpid(), startWallNanos: clock.wallNanos(),
            app: SessionInfo.App(
                name: configuration.app.name, version: configuration.app.version, build: configuration.app.build))
        guard record else {
            return PerfRuntime(
                configuration: configuration, recorder: recorder, clock: clock, sessionID: info.id, directory: nil,
                ledger: nil, session: nil)
        }
        let directory = InstallPolicy.dataDirectory(
            configured: configuration.directory, app: configuration.app, environment: environment)
        let ledger: LedgerWriter
        FileSizeSignal.ignoreUnlessHandled()
        do {
            try DataDirectory.prepare(directory)
            ledger = try LedgerWriter(directory: directory, capBytes: configuration.ledgerCapBytes)
        } catch {
            report(
                "perf: recording in memory only: \(error) (set PERF_DIR to a writable directory, or "
                    + "PERF_RECORDING=0 to silence this)")
            return PerfRuntime(
                configuration: configuration, recorder: recorder, clock: clock, sessionID: info.id, directory: nil,
                ledger: nil, session: nil)
        }
        let store = SessionStore(directory: directory, journalByteBudget: configuration.journalByteBudget, clock: clock)
        for recovered in store.recoverPriorSessions() {
            let lines = RecoveryLines.events(for: recovered)
            var written = true
            for line in lines where (try? ledger.append(line)) == nil { written = false }
            if written { try? store.acknowledge(recovered) }
        }
        var session: LiveSession?
        do {
            session = try store.start(info)
        } catch {
            report("perf: session journal unavailable, crashes will not be explained: \(error)")
        }
        if let session { recorder.addObserver(session) }
        pipeline.addSink(LedgerRecordSink(writer: ledger, sessionID: info.id), mode: .inline)
        pipeline.emit(.session(SessionEventRecord(sessionID: info.id, event: .start, wallNanos: info.startWallNanos)))
        return PerfRuntime(
            configuration: configuration, recorder: recorder, clock: clock, sessionID: info.id,
            directory: directory, ledger: ledger, session: session)
    }

    /// The flight recorder's spans with wall times, or `nil` when the runtime keeps none.
    func recentSpans() -> SpanIntervals? {
        guard let flight = recorder.flightRecorder else { return nil }
        let snapshot = flight.snapshot()
        return SpanIntervals(
            snapshot: snapshot, capacity: flight.capacity, monotonicNanos: clock.monotonicNanos(),
            wallNanos: clock.wallNanos(), threadName: SpanIntervals.currentThreadName)
    }

    /// Ends the session cleanly: open registered spans close as cancelled, the end line and marker
    /// are written, buffered sinks drain.
    func shutdown() {
        recorder.closeAll(exit: .cancelled)
        recorder.pipeline.emit(.session(SessionEventRecord(sessionID: sessionID, event: .end, wallNanos: clock.wallNanos())))
        recorder.pipeline.flush()
        session?.end()
        ledger?.close()
    }
}

/// Creates the data directory `0700`.
enum DataDirectory {
    static func prepare(_ directory: URL) throws {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        if !manager.fileExists(atPath: directory.path, isDirectory: &isDirectory) {
            try manager.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } else if !isDirectory.boolValue {
            throw CocoaError(.fileWriteFileExists, userInfo: [NSFilePathErrorKey: directory.path])
        }
        guard FileSyscalls.live.isAccessible(directory.path, W_OK | X_OK) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: directory.path])
        }
    }
}
