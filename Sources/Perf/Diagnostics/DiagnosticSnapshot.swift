// One diagnostic snapshot: the process figures and the in-memory histograms at one moment, as
// the JSON payload filed under perf-diagnostics/.
import Foundation
import PerfCore

extension Perf {
    /// A snapshot of the process and of its span and hang histograms.
    ///
    /// Written as `perf-diagnostics/<ts>-<session>.json` (schema `perf-diagnostics`, version 1,
    /// keys sorted), each with a `diagnostic` ledger line pointing at it. The report builder takes
    /// each session's newest snapshot for its histograms and lists the process figures.
    public struct DiagnosticSnapshot: Sendable, Equatable {
        /// The schema name in every payload.
        public static let schema = "perf-diagnostics"
        /// The major version this build writes and reads.
        public static let schemaVersion = 1

        /// The session that took the snapshot.
        public var session: String
        /// Wall time of the snapshot, milliseconds since the Unix epoch.
        public var takenAtMs: Int64
        /// Why it was taken: `on-demand`, `periodic` or `shutdown`.
        public var reason: String
        /// The instrumented program.
        public var app: AppInfo
        /// The machine, as the process saw it.
        public var host: HostDescription
        /// Process figures.
        public var process: ProcessFigures
        /// Per-span-name latency histograms of the process so far.
        public var spans: [String: Histogram]
        /// Per-watchdog-target hang and hitch histograms (suppressed episodes excluded).
        public var hangs: [String: Histogram]
        /// The flight recorder's most recent spans, when the process keeps them.
        public var intervals: SpanIntervals?

        /// Creates a snapshot.
        public init(
            session: String, takenAtMs: Int64, reason: String, app: AppInfo, host: HostDescription,
            process: ProcessFigures, spans: [String: Histogram], hangs: [String: Histogram],
            intervals: SpanIntervals? = nil
        ) {
            self.intervals = intervals
            self.session = session
            self.takenAtMs = takenAtMs
            self.reason = reason
            self.app = app
            self.host = host
            self.process = process
            self.spans = spans
            self.hangs = hangs
        }

        /// The payload bytes, keys sorted.
        public var jsonBytes: [UInt8] {
            var out: [UInt8] = []
            var members: [String: ReportJSON] = [
                "schema": .string(Self.schema), "schemaVersion": .int(Int64(Self.schemaVersion)),
                "session": .string(session), "takenAt": .string(LedgerTimestamp.string(ms: takenAtMs)),
                "takenAtMs": .int(takenAtMs), "reason": .string(reason), "app": Self.json(app), "host": host.json,
                "process": process.json,
                "spans": .object(spans.mapValues { .raw(Array($0.jsonString.utf8)) }),
                "hangs": .object(hangs.mapValues { .raw(Array($0.jsonString.utf8)) }),
            ]
            if let intervals {
                members["intervals"] = intervals.json(
                    session: session, takenAtMs: takenAtMs, spans: intervals.spans.map(SpanIntervals.json))
            }
            ReportJSON.object(members).write(into: &out)
            out.append(UInt8(ascii: "\n"))
            return out
        }

        /// Parses a payload.
        ///
        /// - Throws: A message naming the problem: not JSON, another schema, a newer major
        ///   version, a missing or mistyped field, an invalid histogram.
        public init(jsonBytes: [UInt8]) throws(ReportError) {
            try self.init(jsonBytes: jsonBytes, histograms: true)
        }

        /// Parses a payload; without `histograms`, `spans` and `hangs` are left empty and not
        /// decoded (the costly part), for readers that only list process figures.
        init(jsonBytes: [UInt8], histograms: Bool) throws(ReportError) {
            let payload: Payload
            do {
                // The members other than the histograms: small, so checking the header and reading
                // the figures never costs a full parse; the histogram maps have a decoder of their own.
                guard let members = PayloadScanner.members(jsonBytes) else {
                    throw ReportError(.invalidReport, path: "", "not a valid diagnostic payload")
                }
                var small: [UInt8] = [UInt8(ascii: "{")]
                var maps: [String: Range<Int>] = [:]
                for member in members {
                    if member.key == "spans" || member.key == "hangs" || member.key == "intervals" {
                        maps[member.key] = member.value
                        continue
                    }
                    if small.count > 1 { small.append(UInt8(ascii: ",")) }
                    LedgerEncoder.appendQuoted(member.key, into: &small)
                    small.append(UInt8(ascii: ":"))
                    small.append(contentsOf: jsonBytes[member.value])
                }
                small.append(UInt8(ascii: "}"))
                let header = try JSONDecoder().decode(Header.self, from: Data(small))
                guard header.schema == Self.schema else {
                    throw ReportError(
                        .invalidReport, path: "", "not a diagnostic payload (schema \"\(header.schema)\")")
                }
                guard header.schemaVersion <= Self.schemaVersion else {
                    throw ReportError(
                        .newerSchema, path: "",
                        "schemaVersion \(header.schemaVersion) is newer than this build reads (\(Self.schemaVersion))")
                }
                let light = try JSONDecoder().decode(LightPayload.self, from: Data(small))
                var spans: [String: Histogram] = [:]
                var hangs: [String: Histogram] = [:]
                var intervals: SpanIntervals?
                if histograms {
                    guard let spanRange = maps["spans"], let hangRange = maps["hangs"] else {
                        throw ReportError(
                            .invalidReport, path: "", "a diagnostic payload without \"spans\" or \"hangs\"")
                    }
                    spans = try HistogramMapDecoder.decode(jsonBytes[spanRange])
                    hangs = try HistogramMapDecoder.decode(jsonBytes[hangRange])
                    // Optional: older payloads have none, and a damaged block costs only itself.
                    if let range = maps["intervals"],
                        let object = try? JSONSerialization.jsonObject(with: Data(jsonBytes[range]))
                    {
                        intervals = SpanIntervals(jsonObject: object)
                    }
                }
                payload = Payload(
                    session: light.session, takenAtMs: light.takenAtMs, reason: light.reason, app: light.app,
                    host: light.host, process: light.process, spans: spans, hangs: hangs, intervals: intervals)
            } catch let error as ReportError {
                throw error
            } catch {
                throw ReportError(.invalidReport, path: "", "not a valid diagnostic payload")
            }
            self.init(
                session: payload.session, takenAtMs: payload.takenAtMs, reason: payload.reason, app: payload.app,
                host: payload.host, process: payload.process, spans: payload.spans, hangs: payload.hangs,
                intervals: payload.intervals)
        }

        static func json(_ app: AppInfo) -> ReportJSON {
            .object(["name": .string(app.name), "version": .string(app.version), "build": .string(app.build)])
        }

        private struct Header: Decodable {
            var schema: String
            var schemaVersion: Int
        }

        /// A payload without its histograms.
        private struct LightPayload: Decodable {
            var session: String
            var takenAtMs: Int64
            var reason: String
            var app: AppInfo
            var host: HostDescription
            var process: ProcessFigures
        }

        private struct Payload {
            var session: String
            var takenAtMs: Int64
            var reason: String
            var app: AppInfo
            var host: HostDescription
            var process: ProcessFigures
            var spans: [String: Histogram]
            var hangs: [String: Histogram]
            var intervals: SpanIntervals?
        }
    }

    /// The machine a snapshot was taken on, with the toolchain and build configuration.
    public struct HostDescription: Sendable, Equatable, Codable {
        /// Operating system name and version.
        public var os: String
        /// Kernel release.
        public var kernel: String
        /// CPU architecture.
        public var arch: String
        /// CPU model name.
        public var cpuModel: String
        /// Online CPU cores.
        public var cores: Int
        /// Physical memory in bytes.
        public var memoryBytes: UInt64
        /// The Swift compiler version the program was built with.
        public var swiftVersion: String
        /// `debug` or `release`.
        public var buildConfiguration: String

        /// Describes the running machine and this build.
        public static func current() -> HostDescription {
            let host = SessionInfo.Host.current()
            return HostDescription(
                os: host.os, kernel: host.kernel, arch: host.arch, cpuModel: host.cpuModel, cores: host.cores,
                memoryBytes: host.memoryBytes, swiftVersion: compilerVersion,
                buildConfiguration: InstallPolicy.isDebugBuild ? "debug" : "release")
        }

        /// Creates a description.
        public init(
            os: String, kernel: String, arch: String, cpuModel: String, cores: Int, memoryBytes: UInt64,
            swiftVersion: String, buildConfiguration: String
        ) {
            self.os = os
            self.kernel = kernel
            self.arch = arch
            self.cpuModel = cpuModel
            self.cores = cores
            self.memoryBytes = memoryBytes
            self.swiftVersion = swiftVersion
            self.buildConfiguration = buildConfiguration
        }

        var json: ReportJSON {
            .object([
                "os": .string(os), "kernel": .string(kernel), "arch": .string(arch), "cpuModel": .string(cpuModel),
                "cores": .int(Int64(cores)), "memoryBytes": .int(Int64(clamping: memoryBytes)),
                "swiftVersion": .string(swiftVersion), "buildConfiguration": .string(buildConfiguration),
            ])
        }

        static var compilerVersion: String {
            #if compiler(>=6.4)
                return "6.4 or newer"
            #elseif compiler(>=6.3)
                return "6.3"
            #elseif compiler(>=6.2)
                return "6.2"
            #elseif compiler(>=6.1)
                return "6.1"
            #else
                return "6.0"
            #endif
        }
    }
}
