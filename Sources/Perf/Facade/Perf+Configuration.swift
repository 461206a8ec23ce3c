// What a host program tells Perf at install: where to write, who it is, whether to record.
import Foundation
import PerfCore

extension Perf {
    /// Identifies the instrumented program in every file Perf writes.
    public typealias AppInfo = SessionInfo.App

    /// Whether Perf writes anything to disk.
    ///
    /// With recording off, spans still measure and feed histograms; nothing is written.
    /// `PERF_RECORDING` set to `0`, `false`, `no` or `off` (any case) in the environment always
    /// wins; set to `1`, `true`, `yes` or `on` it turns `.auto` on in release builds. Any other
    /// value is ignored, with one message on stderr at install. `.auto` in a release build with
    /// `PERF_RECORDING` unset says once, on stderr at each install, that recording is off and how
    /// to turn it on.
    public enum Recording: Sendable, Equatable {
        /// Record to disk.
        case enabled
        /// Never record to disk.
        case disabled
        /// Debug builds record; release builds record only with `PERF_RECORDING=1` (or `true`,
        /// `yes`, `on`), and without it say so on stderr at install.
        case auto
    }

    /// Everything `Perf.install(_:)` needs; every parameter has a default.
    ///
    /// ```swift
    /// Perf.install(Perf.Configuration(
    ///     directory: URL(fileURLWithPath: "/var/lib/myservice/perf"),
    ///     app: Perf.AppInfo(name: "myservice", version: "1.4.0", build: "812"),
    ///     recording: .auto))
    /// ```
    public struct Configuration: Sendable, Equatable {
        /// The data directory; `nil` means `$PERF_DIR`, else `$STATE_DIRECTORY/perf` (systemd's
        /// `StateDirectory=`; the first of several), else `$XDG_STATE_HOME/perf/<app>`, else
        /// `~/.local/state/perf/<app>`.
        public var directory: URL?
        /// The program's identity.
        public var app: AppInfo
        /// The consent gate.
        public var recording: Recording
        /// The ledger's size cap; at the cap it rotates to `perf-events.jsonl.prev`.
        public var ledgerCapBytes: Int
        /// The size of the ledger's crash-durable queue (4 MiB by default, at least 64 KiB): every
        /// ledger line is copied there before the call that made it returns, and written from
        /// there in runs. Lines that find it full are dropped and counted in a `dropped` line with
        /// `"cause":"backlog"`.
        public var ledgerBacklogBytes: Int = 4 << 20
        /// Milliseconds between two samples of the thread of a `Perf.measure` span that is past
        /// its budget (10 by default): its over-budget line then says where the thread was (its
        /// `profile`). Zero or less turns the span sampler off.
        public var sampleIntervalMs: Double = 10
        /// The most samples taken of one span (200 by default); sampling stops there and the
        /// profile says `"capped":true`.
        public var maxSamples: Int = 200
        /// The size cap of `performance-report.json`.
        public var reportCapBytes: Int
        /// Minimum seconds between two ledger lines of the same note name.
        public var noteFloorSeconds: Double
        /// Byte budget of each session journal (open long-lived spans, in-progress hangs).
        public var journalByteBudget: Int
        /// Seconds between two periodic diagnostic snapshots; zero or less turns them off
        /// (``Perf/captureDiagnostics()`` and the snapshot at shutdown still happen).
        public var diagnosticsIntervalSeconds: Double
        /// Slots in the span flight recorder, the ring of the most recent span ends that
        /// diagnostics and reports carry for timelines (rounded up to a power of two); 0 keeps none.
        /// From 1,024 up the ring has four lanes of this many slots, each written by its own
        /// threads, so that threads ending spans at once share no cache line; readers get the
        /// newest this many spans of all. A lane costs 64 bytes a slot of address space in the
        /// span memory, and memory only once a thread writes it.
        public var flightRecorderCapacity: Int
        /// Bytes of the span memory, the file mapping `sessions/<id>/spans.map` that holds the
        /// span histograms and the flight recorder so that a crashed session keeps them. Its blocks
        /// are reserved on disk up front; memory is used only by the pages spans touch (about
        /// 1 KiB per span name and recording thread). Records that find it full are counted as
        /// dropped (`spanMemory.droppedRecords` in diagnostics), never grown into.
        public var spanMemoryBytes: Int
        /// Distinct static span names the span memory holds; further names are counted as dropped.
        public var spanNameCapacity: Int
        /// One line on stderr per hang, fatal hang and crashed session (see ``Perf/LogLines``);
        /// `nil`, the default, writes none.
        public var logToStandardError: LogLines?

        /// Creates a configuration.
        public init(
            directory: URL? = nil,
            app: AppInfo = .current,
            recording: Recording = .auto,
            ledgerCapBytes: Int = 512 * 1024,
            reportCapBytes: Int = 2 * 1024 * 1024,
            noteFloorSeconds: Double = 30,
            journalByteBudget: Int = 1 << 20,
            diagnosticsIntervalSeconds: Double = 3600,
            flightRecorderCapacity: Int = 4096,
            spanMemoryBytes: Int = 32 << 20,
            spanNameCapacity: Int = 1024,
            logToStandardError: LogLines? = nil
        ) {
            self.logToStandardError = logToStandardError
            self.spanMemoryBytes = spanMemoryBytes
            self.spanNameCapacity = spanNameCapacity
            self.directory = directory
            self.app = app
            self.recording = recording
            self.ledgerCapBytes = ledgerCapBytes
            self.reportCapBytes = reportCapBytes
            self.noteFloorSeconds = noteFloorSeconds
            self.journalByteBudget = journalByteBudget
            self.diagnosticsIntervalSeconds = diagnosticsIntervalSeconds
            self.flightRecorderCapacity = flightRecorderCapacity
        }
    }
}

/// The decisions install derives from a configuration and the environment, as pure functions.
enum InstallPolicy {
    /// What `PERF_RECORDING` says: on (`1`, `true`, `yes`, `on`), off (`0`, `false`, `no`, `off`),
    /// nothing (unset or blank), or something else. Case and surrounding whitespace are ignored.
    enum RecordingFlag: Equatable {
        case unset
        case on
        case off
        /// A value that is neither; it is ignored, and install says so once.
        case unrecognized(String)

        static let onSpellings: Set<String> = ["1", "true", "yes", "on"]
        static let offSpellings: Set<String> = ["0", "false", "no", "off"]

        init(environment: [String: String]) {
            guard let raw = environment["PERF_RECORDING"] else {
                self = .unset
                return
            }
            let value = raw.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
            if value.isEmpty {
                self = .unset
            } else if Self.onSpellings.contains(value) {
                self = .on
            } else if Self.offSpellings.contains(value) {
                self = .off
            } else {
                self = .unrecognized(raw)
            }
        }
    }

    /// Whether to record, and the one message install reports: a `PERF_RECORDING` value that was
    /// not understood, or `.auto` turning recording off in a release build.
    struct RecordingDecision: Equatable {
        var record: Bool
        var warning: String?
    }

    /// What install says when `.auto` leaves recording off in a release build and nobody set
    /// `PERF_RECORDING`: otherwise the service runs and no data directory ever appears, with
    /// nothing to say why. A program that chose `.disabled`, or an environment that said off,
    /// hears nothing: they asked for it.
    static let autoOffInRelease =
        "perf: recording to disk is off: .auto does not record in a release build; set PERF_RECORDING=1 "
        + "in the environment, or recording: .enabled in Perf.Configuration, to write the ledger and reports"

    /// Applies the consent gate: `PERF_RECORDING` off always wins; `.auto` records in debug builds
    /// and, in release builds, only with `PERF_RECORDING` on.
    static func shouldRecord(_ recording: Perf.Recording, environment: [String: String], debugBuild: Bool) -> Bool {
        recordingDecision(recording, environment: environment, debugBuild: debugBuild).record
    }

    /// ``shouldRecord(_:environment:debugBuild:)`` with the message install reports: for a
    /// `PERF_RECORDING` value that is neither on nor off (it is ignored; the warning names it and
    /// says what recording does instead), and for `.auto` in a release build with `PERF_RECORDING`
    /// unset (``autoOffInRelease``: how to turn recording on).
    static func recordingDecision(
        _ recording: Perf.Recording, environment: [String: String], debugBuild: Bool
    ) -> RecordingDecision {
        let flag = RecordingFlag(environment: environment)
        if flag == .off { return RecordingDecision(record: false) }
        let record: Bool
        switch recording {
        case .enabled: record = true
        case .disabled: record = false
        case .auto: record = debugBuild || flag == .on
        }
        if flag == .unset, recording == .auto, !record {
            return RecordingDecision(record: false, warning: autoOffInRelease)
        }
        guard case .unrecognized(let value) = flag else { return RecordingDecision(record: record) }
        let because: String
        switch recording {
        case .enabled: because = "as the configuration's .enabled says"
        case .disabled: because = "as the configuration's .disabled says"
        case .auto: because = debugBuild ? "as .auto is in a debug build" : "as .auto is in a release build"
        }
        return RecordingDecision(
            record: record,
            warning: "perf: ignoring PERF_RECORDING=\(value.debugDescription) (not one of 1, true, yes, on, 0, false, "
                + "no, off); recording to disk is \(record ? "on" : "off"), \(because)")
    }

    /// Resolves the data directory: the configuration's, else `$PERF_DIR`, else
    /// `$STATE_DIRECTORY/perf`, else `$XDG_STATE_HOME/perf/<app>`, else `~/.local/state/perf/<app>`.
    ///
    /// systemd sets `$STATE_DIRECTORY` for a unit with `StateDirectory=`: a directory of the
    /// service's own (several, colon-separated, when the unit names several; the first is used),
    /// so no `<app>` component is added; `perf` keeps Perf's files apart from the service's.
    /// A relative first entry is ignored, like a relative `$XDG_STATE_HOME`.
    static func dataDirectory(configured: URL?, app: Perf.AppInfo, environment: [String: String]) -> URL {
        if let configured { return configured }
        if let dir = environment["PERF_DIR"], !dir.isEmpty { return URL(fileURLWithPath: dir) }
        if let state = environment["STATE_DIRECTORY"]?.split(separator: ":", omittingEmptySubsequences: false).first,
            state.hasPrefix("/")
        {
            return URL(fileURLWithPath: String(state)).appendingPathComponent("perf")
        }
        let appComponent = sanitizedPathComponent(app.name)
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            return URL(fileURLWithPath: state).appendingPathComponent("perf").appendingPathComponent(appComponent)
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".local/state/perf").appendingPathComponent(
            appComponent)
    }

    /// An app name made safe as one path component.
    static func sanitizedPathComponent(_ name: String) -> String {
        let allowed = name.unicodeScalars.map { scalar -> Character in
            let ok = CharacterSet.alphanumerics.contains(scalar) || scalar == "-" || scalar == "_" || scalar == "."
            return ok ? Character(scalar) : "_"
        }
        let result = String(allowed).trimmingCharacters(in: CharacterSet(charactersIn: "."))
        return result.isEmpty ? "app" : result
    }

    static var isDebugBuild: Bool {
        #if DEBUG
            return true
        #else
            return false
        #endif
    }
}
