// The flight recorder's contents with wall-clock times and thread names: the `intervals` block
// of diagnostic payloads and reports, from which timelines are drawn.
import Foundation
import PerfCore

extension Perf {
    /// The most recent finished spans of one process, as diagnostics and reports carry them.
    ///
    /// Times are nanoseconds after ``epochUnixMs`` (the oldest span's start, rounded down to the
    /// millisecond), so every number stays exact in a JSON double.
    public struct SpanIntervals: Sendable, Equatable {
        /// One finished span.
        public struct Span: Sendable, Equatable {
            /// The span name.
            public var name: String
            /// The kernel id of the thread that ended it.
            public var threadID: Int32
            /// Start, nanoseconds after ``SpanIntervals/epochUnixMs``.
            public var startNanos: Int64
            /// Duration in nanoseconds.
            public var durationNanos: Int64
            /// How it ended (`success`, `failure`, …).
            public var exit: String
            /// Its budget, or `nil` for a span recorded every time.
            public var budgetMs: Double?
        }

        /// Slots in the ring that held them.
        public var capacity: Int
        /// Spans recorded since the ring was made; the ring keeps the newest ``capacity``.
        public var recorded: UInt64
        /// The time origin of ``Span/startNanos``, milliseconds since the Unix epoch.
        public var epochUnixMs: Int64
        /// Thread names by kernel id, as the process saw them when the snapshot was taken.
        public var threads: [Int32: String]
        /// The spans, oldest first.
        public var spans: [Span]

        /// Converts a flight-recorder snapshot, given one reading of both clocks taken with it.
        ///
        /// - Parameters:
        ///   - snapshot: What the ring held.
        ///   - capacity: The ring's size.
        ///   - monotonicNanos: CLOCK_MONOTONIC when the snapshot was taken.
        ///   - wallNanos: Wall time at the same moment.
        ///   - threadName: Names a thread id (see ``currentThreadName(_:)``).
        init(
            snapshot: FlightRecorder.Snapshot, capacity: Int, monotonicNanos: UInt64, wallNanos: UInt64,
            threadName: (Int32) -> String
        ) {
            // Wall time of a monotonic reading: the offset between the clocks at the snapshot.
            func wall(_ monotonic: UInt64) -> Int64 {
                Int64(clamping: wallNanos) - Int64(clamping: monotonicNanos &- min(monotonic, monotonicNanos))
            }
            let oldest = snapshot.entries.map { wall($0.startMonotonicNanos) }.min() ?? Int64(clamping: wallNanos)
            let epochMs = oldest >= 0 ? oldest / 1_000_000 : 0
            self.capacity = capacity
            self.recorded = snapshot.recorded
            self.epochUnixMs = epochMs
            self.spans = snapshot.entries.map { entry in
                Span(
                    name: entry.name, threadID: entry.threadID,
                    startNanos: max(0, wall(entry.startMonotonicNanos) - epochMs * 1_000_000),
                    durationNanos: Int64(clamping: entry.durationNanos), exit: entry.exit.rawValue,
                    budgetMs: entry.budgetNanos.map { Double($0) / 1_000_000 })
            }
            var threads: [Int32: String] = [:]
            for id in Set(snapshot.entries.map(\.threadID)) { threads[id] = threadName(id) }
            self.threads = threads
        }

        /// Creates intervals from their parts.
        public init(capacity: Int, recorded: UInt64, epochUnixMs: Int64, threads: [Int32: String], spans: [Span]) {
            self.capacity = capacity
            self.recorded = recorded
            self.epochUnixMs = epochUnixMs
            self.threads = threads
            self.spans = spans
        }

        /// A thread of this process by kernel id: `main` for the main thread, its `comm` name
        /// otherwise, `thread <tid>` once it has exited.
        static func currentThreadName(_ id: Int32) -> String {
            if id == getpid() { return "main" }
            let path = "/proc/self/task/\(id)/comm"
            guard let name = try? String(contentsOfFile: path, encoding: .utf8) else { return "thread \(id)" }
            let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
            return trimmed.isEmpty ? "thread \(id)" : trimmed
        }

        /// One span as the report writes it (keys sorted; `budgetMs` only when it had one).
        static func json(_ span: Span) -> ReportJSON {
            var members: [String: ReportJSON] = [
                "name": .string(span.name), "tid": .int(Int64(span.threadID)), "startNs": .int(span.startNanos),
                "durationNs": .int(span.durationNanos), "exit": .string(span.exit),
            ]
            if let budget = span.budgetMs { members["budgetMs"] = .double(budget) }
            return .object(members)
        }

        /// The block for `session`, with the given spans (all of them, or the newest that fit a cap).
        func json(session: String, takenAtMs: Int64, spans: [ReportJSON]) -> ReportJSON {
            .object([
                "session": .string(session), "takenAt": .string(LedgerTimestamp.string(ms: takenAtMs)),
                "capacity": .int(Int64(capacity)), "recorded": .int(Int64(clamping: recorded)),
                "epochUnixMs": .int(epochUnixMs),
                "threads": .array(
                    threads.keys.sorted().map { .object(["tid": .int(Int64($0)), "name": .string(threads[$0] ?? "")]) }),
                "spans": .array(spans),
            ])
        }

        /// Parses a block; `nil` when it is not one (a reader skips what it cannot use).
        package init?(jsonObject: Any) {
            guard let block = jsonObject as? [String: Any],
                let epoch = block["epochUnixMs"].flatMap(ReportDocument.number), abs(epoch) < 9e12,
                let spans = block["spans"] as? [Any]
            else { return nil }
            capacity = Int(ReportDocument.int(block["capacity"]))
            recorded = UInt64(max(0, ReportDocument.int(block["recorded"])))
            epochUnixMs = Int64(epoch)
            var threads: [Int32: String] = [:]
            for case let thread as [String: Any] in block["threads"] as? [Any] ?? [] {
                guard let name = thread["name"] as? String else { continue }
                threads[Int32(clamping: ReportDocument.int(thread["tid"]))] = name
            }
            self.threads = threads
            self.spans = spans.compactMap { value in
                guard let span = value as? [String: Any], let name = span["name"] as? String,
                    let start = span["startNs"].flatMap(ReportDocument.number), start >= 0, start < 9e18,
                    let duration = span["durationNs"].flatMap(ReportDocument.number), duration >= 0, duration < 9e18
                else { return nil }
                return Span(
                    name: name, threadID: Int32(clamping: ReportDocument.int(span["tid"])), startNanos: Int64(start),
                    durationNanos: Int64(duration), exit: span["exit"] as? String ?? "success",
                    budgetMs: span["budgetMs"].flatMap(ReportDocument.number))
            }
        }
    }
}
