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
    /// The crash-durable queue the ledger's lines pass through (nil without a ledger).
    let ledgerQueue: LedgerQueue?
    let session: LiveSession?
    /// Where `Perf.markReady()` sends `READY=1`: systemd's `$NOTIFY_SOCKET`, when set and usable.
    let notifier: SystemdNotifier?

    /// The span histograms of this runtime's session (in its span memory).
    let histograms: HistogramRegistry
    /// Keeps the span memory's heartbeat while the runtime is installed.
    let heartbeat: SpanMemoryHeartbeat?
    /// Samples the threads of measured spans past their budget; `nil` when turned off.
    let sampler: SpanSampler?
    /// The counters of `Perf.prometheusText()` and the optional stderr log.
    let operations: RuntimeOperations
    /// The histograms as shutdown found them, before the span memory was closed (closing starts
    /// its counters again from zero, for spans that end late).
    private let closedHistograms = Mutex<[String: LatencyHistogram]>([:])
    /// The tallies as shutdown found them, likewise.
    private let closedTallies = Mutex<[String: SpanTally]>([:])

    /// Ledger lines this runtime lost before they were written, by cause: the ledger lane's full
    /// backlog, and the writer's own failures.
    func droppedLedgerLines() -> [String: UInt64] {
        var dropped: [String: UInt64] = [:]
        guard let ledger else { return dropped }
        dropped[DropCause.backlog.rawValue] = ledgerQueue?.droppedLines.load(ordering: .relaxed) ?? 0
        dropped[LedgerWriter.writeCause] = UInt64(ledger.statistics.droppedLines)
        return dropped
    }

    /// Every over-budget and non-success end of this runtime's session, up to shutdown and after.
    func allTallies() -> [String: SpanTally] {
        var merged = closedTallies.withLock { $0 }
        for (name, tally) in histograms.tallies() { merged[name, default: SpanTally()].merge(tally) }
        return merged
    }

    /// Every span this runtime's session ended: up to shutdown, and any that ended after it.
    func allHistograms() -> [String: LatencyHistogram] {
        var merged = closedHistograms.withLock { $0 }
        for (name, histogram) in histograms.snapshot() { merged[name, default: LatencyHistogram()].merge(histogram) }
        return merged
    }

    private init(
        configuration: Perf.Configuration, recorder: SpanRecorder, histograms: HistogramRegistry, clock: any PerfClock,
        sessionID: String, directory: URL?, ledger: LedgerWriter?, ledgerQueue: LedgerQueue?, session: LiveSession?,
        notifier: SystemdNotifier?, profiles: ProfileSlots?
    ) {
        self.configuration = configuration
        self.recorder = recorder
        self.histograms = histograms
        self.clock = clock
        self.sessionID = sessionID
        self.noteFloor = NoteFloor(
            floorSeconds: configuration.noteFloorSeconds,
            timer: ledger == nil ? nil : Self.noteFloorTimer(clock: clock))
        self.directory = directory
        self.ledger = ledger
        self.ledgerQueue = ledgerQueue
        self.session = session
        self.notifier = notifier
        heartbeat = histograms.memory.isFileBacked ? SpanMemoryHeartbeat(memory: histograms.memory, clock: clock) : nil
        sampler = profiles.map {
            SpanSampler(
                slots: $0, intervalMs: configuration.sampleIntervalMs, maxSamples: configuration.maxSamples,
                clock: clock)
        }
        // A test's manual clock ticks the sampler itself: a thread would sample whenever the
        // clock happened to be past a budget.
        sampler?.start(thread: clock is SystemClock)
        operations = RuntimeOperations(configuration: configuration, pipeline: recorder.pipeline, clock: clock)
        Probes.session(start: true, pid: getpid())  // USDT perf:session_start
        noteFloor.timer?.setHandler { [weak self] in self?.writeEndedNoteWindows() }
    }

    /// Builds a runtime. Never throws: a directory that cannot be used costs one message on
    /// `report` and recording continues in memory only; a flight recorder that cannot be
    /// allocated costs one message and the runtime keeps none. Nil, after one message, only when
    /// not even 1 MiB of anonymous memory can be mapped for the span histograms: Perf then stays
    /// uninstalled (inert) rather than crash the host.
    static func make(
        configuration: Perf.Configuration, environment: [String: String], clock: any PerfClock,
        report: (String) -> Void
    ) -> PerfRuntime? {
        let pipeline = RecordPipeline()
        let decision = InstallPolicy.recordingDecision(
            configuration.recording, environment: environment, debugBuild: InstallPolicy.isDebugBuild)
        if let warning = decision.warning { report(warning) }
        let notifier = notifier(environment: environment, report: report)
        let record = decision.record
        let info = SessionInfo(
            pid: getpid(), startWallNanos: clock.wallNanos(), app: configuration.app)
        func runtime(
            memory: SpanMemory?, directory: URL?, ledger: LedgerWriter?, queue: LedgerQueue? = nil,
            session: LiveSession?, sessionPath: String? = nil
        ) -> PerfRuntime? {
            guard let memory = memory ?? anonymousMemory(configuration, clock: clock, report: report) else {
                return nil
            }
            let histograms = HistogramRegistry(memory: memory)
            let sizes = memory.configuration
            memory.whenFirstRecordIsDropped {
                PerfState.reportToStandardError(
                    "perf: span memory is full (\(sizes.nameCapacity) span names, \(sizes.bytes >> 20) MiB): span ends of "
                        + "names past it are counted, not kept (LOST in perf-report summary); raise "
                        + "Perf.Configuration.spanNameCapacity or spanMemoryBytes")
            }
            let flight = FlightRecorder(memory: memory)
            if flight == nil, memory.configuration.ringCapacity > 0 {
                report("perf: cannot allocate the flight recorder; running without it (Perf.recentSpans() is nil)")
            }
            let profiles =
                configuration.sampleIntervalMs > 0
                ? ProfileSlots.make(
                    directory: sessionPath, slotCount: ProfileSlots.defaultSlotCount, syscalls: FileSyscalls(),
                    clock: clock, problem: report) : nil
            let recorder = SpanRecorder(
                histograms: histograms, pipeline: pipeline, clock: clock, flightRecorder: flight, profiles: profiles)
            return PerfRuntime(
                configuration: configuration, recorder: recorder, histograms: histograms, clock: clock,
                sessionID: info.id, directory: directory, ledger: ledger, ledgerQueue: queue, session: session,
                notifier: notifier, profiles: profiles)
        }
        guard record else { return runtime(memory: nil, directory: nil, ledger: nil, session: nil) }
        let directory = InstallPolicy.dataDirectory(
            configured: configuration.directory, app: configuration.app, environment: environment)
        let ledger: LedgerWriter
        FileSizeSignal.ignoreUnlessHandled()
        do throws(DataDirectory.Failure) {
            try DataDirectory.prepare(directory)
            do throws(LedgerError) {
                ledger = try makeLedger(directory: directory, capBytes: configuration.ledgerCapBytes)
            } catch {
                throw DataDirectory.Failure(
                    directory: directory.path, step: .open, path: error.path, errno: error.errno ?? EIO)
            }
        } catch {
            report(error.report)
            return runtime(memory: nil, directory: nil, ledger: nil, session: nil)
        }
        let store = SessionStore(directory: directory, journalByteBudget: configuration.journalByteBudget, clock: clock)
        let recoveredSessions = store.recoverPriorSessions()
        for recovered in recoveredSessions {
            // Lines the prior process had queued come first: they happened before it ended.
            LedgerQueue.replay(path: store.ledgerQueuePath(id: recovered.id), into: ledger, session: recovered.id)
            RecoveredDiagnostics.write(recovered, directory: directory, ledger: ledger)
            // The over-budget spans it was sampling when it died, each with its profile so far.
            var profiles: ProfileSlots.Recovered?
            if case .crashed = recovered.status {
                profiles = ProfileSlots.recover(path: store.sessionPath(id: recovered.id) + "/" + ProfileSlots.fileName)
            }
            let lines = RecoveryLines.events(for: recovered, profiles: profiles)
            var written = true
            for line in lines where (try? ledger.append(line)) == nil { written = false }
            if written { try? store.acknowledge(recovered) }
        }
        var session: LiveSession?
        var memory: SpanMemory?
        do {
            session = try store.start(info)
            do {
                memory = try SpanMemory.create(
                    path: store.spanMemoryPath(id: info.id), spanMemoryConfiguration(configuration),
                    anchorMonotonicNanos: clock.monotonicNanos(), anchorWallNanos: clock.wallNanos())
            } catch {
                report("perf: span histograms will not survive a crash: \(error)")
            }
        } catch {
            report("perf: session journal unavailable, crashes will not be explained: \(error)")
        }
        let queue = LedgerQueue.make(
            path: session == nil ? nil : store.ledgerQueuePath(id: info.id),
            backlogBytes: max(RecordPipeline.minimumBacklogBytes, configuration.ledgerBacklogBytes), writer: ledger,
            sessionID: info.id, problem: report)
        if queue == nil { report("perf: cannot map the ledger queue; over-budget lines will not be written") }
        guard
            let built = runtime(
                memory: memory, directory: directory, ledger: ledger, queue: queue, session: session,
                sessionPath: session == nil ? nil : store.sessionPath(id: info.id))
        else {
            // Nothing was published: close what was opened, as a clean end would.
            session?.end()
            ledger.close()
            return nil
        }
        built.operations.recovered(recoveredSessions)
        if let session { built.recorder.addObserver(session) }
        if let queue { pipeline.addSink(LedgerRecordSink(queue: queue, sessionID: info.id), mode: .concurrent) }
        pipeline.emit(.session(SessionEventRecord(sessionID: info.id, event: .start, wallNanos: info.startWallNanos)))
        return built
    }

    /// The ledger writer; in debug builds with the faults a test asked for in its syscalls.
    static func makeLedger(directory: URL, capBytes: Int) throws(LedgerError) -> LedgerWriter {
        #if DEBUG
            if let faults = PerfState.ledgerFaults.withLock({ $0 }) {
                return try LedgerWriter(
                    directory: directory, capBytes: capBytes, syscalls: FileSyscalls(faults: faults))
            }
        #endif
        return try LedgerWriter(directory: directory, capBytes: capBytes)
    }

    /// The notifier `$NOTIFY_SOCKET` names; a value that cannot be used costs one message.
    static func notifier(environment: [String: String], report: (String) -> Void) -> SystemdNotifier? {
        switch SystemdNotifier.fromEnvironment(environment) {
        case nil: return nil
        case .success(let notifier): return notifier
        case .failure(let problem):
            let value = environment["NOTIFY_SOCKET", default: ""]
            report(
                "perf: ignoring NOTIFY_SOCKET=\(value.debugDescription) (\(problem)); Perf.markReady() will not send "
                    + "READY=1")
            return nil
        }
    }

    static func spanMemoryConfiguration(_ configuration: Perf.Configuration) -> SpanMemory.Configuration {
        SpanMemory.Configuration(
            bytes: configuration.spanMemoryBytes, nameCapacity: configuration.spanNameCapacity,
            ringCapacity: max(0, configuration.flightRecorderCapacity))
    }

    /// Span memory in anonymous pages: the configured size, else 1 MiB when the address space
    /// cannot be had, else nil after one message on `report`.
    static func anonymousMemory(
        _ configuration: Perf.Configuration, clock: any PerfClock, report: (String) -> Void
    ) -> SpanMemory? {
        var sizes = spanMemoryConfiguration(configuration)
        if let memory = try? SpanMemory.anonymous(
            sizes, anchorMonotonicNanos: clock.monotonicNanos(), anchorWallNanos: clock.wallNanos())
        {
            return memory
        }
        sizes.bytes = 1 << 20
        sizes.nameCapacity = min(sizes.nameCapacity, 256)
        sizes.ringCapacity = min(sizes.ringCapacity, 1024)
        do {
            return try SpanMemory.anonymous(
                sizes, anchorMonotonicNanos: clock.monotonicNanos(), anchorWallNanos: clock.wallNanos())
        } catch {
            report("perf: cannot map 1 MiB of anonymous memory for span histograms (\(error)); Perf is not installed")
            return nil
        }
    }

    /// The flight recorder's spans with wall times, or `nil` when the runtime keeps none.
    func recentSpans() -> SpanIntervals? {
        guard let flight = recorder.flightRecorder else { return nil }
        let snapshot = flight.snapshot()
        return SpanIntervals(
            snapshot: snapshot, capacity: flight.capacity, monotonicNanos: clock.monotonicNanos(),
            wallNanos: clock.wallNanos(), threadName: SpanIntervals.currentThreadName)
    }

    /// Ends the session cleanly: open registered spans close as cancelled, the counts the note
    /// floor still holds are written, the end line and marker are written, buffered sinks drain.
    func shutdown() {
        sampler?.stop()
        recorder.closeAll(exit: .cancelled)
        writeHeldBackNotes(noteFloor.takeAll())
        recorder.pipeline.emit(
            .session(SessionEventRecord(sessionID: sessionID, event: .end, wallNanos: clock.wallNanos())))
        Probes.session(start: false, pid: getpid())  // USDT perf:session_end
        recorder.pipeline.flush()
        ledgerQueue?.close(deadline: Date(timeIntervalSinceNow: 10))
        operations.finish()
        heartbeat?.stop()
        // The shutdown snapshot holds the histograms now; the file goes, like the journal's end,
        // and its pages with it. The addresses stay mapped: a span begun under this runtime may
        // still end into them.
        let final = histograms.snapshot()
        closedHistograms.withLock { $0 = final }
        let tallies = histograms.tallies()
        closedTallies.withLock { $0 = tallies }
        histograms.memory.close()
        session?.end()
        ledger?.close()
    }
}

/// Creates the data directory (`0700`) and checks that it can be written, with errors that say why not.
enum DataDirectory {
    /// Why a data directory cannot be used, as the one line install reports.
    struct Failure: Error, Equatable, CustomStringConvertible {
        enum Step: Equatable {
            /// `mkdir` of `path` (the directory or one of its parents) failed.
            case create
            /// The directory is there but is not a directory.
            case notADirectory
            /// The directory is there but `access(W_OK | X_OK)` refuses.
            case notWritable
            /// Opening the ledger `path` inside it failed.
            case open
        }

        /// The data directory.
        let directory: String
        let step: Step
        /// The path the failing call was on.
        let path: String
        let errno: Int32

        /// What failed, e.g. `cannot create '/proc/x' (no such file or directory, errno 2)`.
        var description: String {
            let reason = "\(String(cString: strerror(errno)).lowercased()), errno \(errno)"
            let subject = path == directory ? "it" : "'\(path)'"
            switch step {
            case .create: return "cannot create \(subject) (\(reason))"
            case .notADirectory: return "it exists but is not a directory"
            case .notWritable: return "cannot write in it (\(reason))"
            case .open: return "cannot open \(subject) (\(reason))"
            }
        }

        /// The sentence install reports: the directory, what failed, and what Perf does instead.
        var report: String {
            "perf: cannot use data directory '\(directory)': \(description); Perf records in memory only "
                + "(set PERF_DIR to a writable directory, or PERF_RECORDING=0 to silence this)"
        }
    }

    /// Makes `directory` (and missing parents, `0700`) and checks it can be written.
    static func prepare(_ directory: URL, syscalls: FileSyscalls = .live) throws(Failure) {
        let path = directory.path
        switch syscalls.status(path) {
        case .success(let found) where !found.isDirectory:
            throw Failure(directory: path, step: .notADirectory, path: path, errno: ENOTDIR)
        case .success: break
        case .failure:
            if let failed = create(path, syscalls: syscalls) {
                throw Failure(directory: path, step: .create, path: failed.path, errno: failed.errno)
            }
        }
        if case .failure(let errno) = syscalls.access(path, W_OK | X_OK) {
            throw Failure(directory: path, step: .notWritable, path: path, errno: errno)
        }
    }

    /// `mkdir -p` with mode `0700`: the path and errno of the first `mkdir` that failed, if any.
    private static func create(_ path: String, syscalls: FileSyscalls) -> (path: String, errno: Int32)? {
        switch syscalls.makeDirectory(path, mode: 0o700) {
        case .success: return nil
        case .failure(ENOENT):
            let parent = (path as NSString).deletingLastPathComponent
            guard !parent.isEmpty, parent != path else { return (path, ENOENT) }
            if let failed = create(parent, syscalls: syscalls) { return failed }
            if case .failure(let errno) = syscalls.makeDirectory(path, mode: 0o700) { return (path, errno) }
            return nil
        case .failure(let errno): return (path, errno)
        }
    }
}

#if DEBUG
    extension PerfState {
        /// Faults injected into the syscalls of the ledgers the next installs open (tests only).
        static let ledgerFaults = Mutex<SyscallFaultInjector?>(nil)
    }
#endif
