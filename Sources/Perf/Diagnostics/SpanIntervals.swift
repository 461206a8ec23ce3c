// The flight recorder's contents with wall-clock times and thread names: the `intervals` block
// of diagnostic payloads and reports, from which timelines are drawn.
import Foundation
import PerfCore

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
        /// How it ended.
        public var exit: ReportBuilder.Exit
        /// Its budget, or `nil` for a span recorded every time.
        public var budgetMs: Double?

        /// Creates a span.
        public init(
            name: String, threadID: Int32, startNanos: Int64, durationNanos: Int64,
            exit: ReportBuilder.Exit = .success, budgetMs: Double? = nil
        ) {
            self.name = name
            self.threadID = threadID
            self.startNanos = startNanos
            self.durationNanos = durationNanos
            self.exit = exit
            self.budgetMs = budgetMs
        }
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
                durationNanos: Int64(clamping: entry.durationNanos), exit: ReportBuilder.Exit(entry.exit),
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

    /// A thread of this process by kernel id, as ``ThreadNames/laneName(of:comm:isMain:)`` ranks
    /// what is known of it and its `comm` now.
    static func currentThreadName(_ id: Int32) -> String {
        ThreadNames.shared.laneName(of: id, comm: ThreadNames.comm(of: id), isMain: id == getpid())
    }

    /// One span as the report writes it (keys sorted; `budgetMs` only when it had one).
    static func json(_ span: Span) -> ReportJSON {
        var members: [String: ReportJSON] = [
            "name": .string(span.name), "tid": .int(Int64(span.threadID)), "startNs": .int(span.startNanos),
            "durationNs": .int(span.durationNanos), "exit": .string(span.exit.rawValue),
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
}

extension SpanIntervals: Codable {
    enum CodingKeys: String, CodingKey { case capacity, recorded, epochUnixMs, threads, spans }

    /// One `threads` entry.
    private struct Thread: Codable {
        var tid: Int32
        var name: String

        enum CodingKeys: String, CodingKey { case tid, name }

        init(tid: Int32, name: String) {
            self.tid = tid
            self.name = name
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            tid = Int32(clamping: try container.required(.tid, as: Int64.self))
            name = try container.required(.name)
        }
    }

    /// Reads the block's ring (the keys other than `session` and `takenAt`); `epochUnixMs` and
    /// `spans` are required, absent counts read as 0.
    public init(from decoder: any Decoder) throws {
        let context = decoder.reportContext
        let container = try decoder.container(keyedBy: CodingKeys.self)
        epochUnixMs = try container.required(.epochUnixMs)
        guard container.contains(.spans), try !container.decodeNil(forKey: .spans) else {
            throw ReportDecodingError(path: container.codingPath + [CodingKeys.spans], message: "missing")
        }
        spans = try container.list(.spans, context)
        capacity = try container.optional(.capacity, context) ?? 0
        recorded = try container.optional(.recorded, context) ?? 0
        var threads: [Int32: String] = [:]
        for thread in try container.list(.threads, context, of: Thread.self) { threads[thread.tid] = thread.name }
        self.threads = threads
    }

    /// Writes the ring's keys (threads by id).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(capacity, forKey: .capacity)
        try container.encode(recorded, forKey: .recorded)
        try container.encode(epochUnixMs, forKey: .epochUnixMs)
        try container.encode(threads.keys.sorted().map { Thread(tid: $0, name: threads[$0] ?? "") }, forKey: .threads)
        try container.encode(spans, forKey: .spans)
    }
}

extension SpanIntervals.Span: Codable {
    enum CodingKeys: String, CodingKey {
        case name, threadID = "tid", startNanos = "startNs", durationNanos = "durationNs", exit, budgetMs
    }

    /// Reads a span; `name`, `startNs` and `durationNs` are required, an absent exit reads as
    /// `success`. A thread id outside 32 bits is clamped.
    public init(from decoder: any Decoder) throws {
        let context = decoder.reportContext
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.required(.name)
        startNanos = try container.required(.startNanos)
        durationNanos = try container.required(.durationNanos)
        threadID = Int32(clamping: try container.optional(.threadID, context, as: Int64.self) ?? 0)
        exit = try container.optional(.exit, context) ?? .success
        budgetMs = try container.optional(.budgetMs, context)
    }

    /// Writes the span (`budgetMs` only when it has one).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(threadID, forKey: .threadID)
        try container.encode(startNanos, forKey: .startNanos)
        try container.encode(durationNanos, forKey: .durationNanos)
        try container.encode(exit, forKey: .exit)
        try container.encodeIfPresent(budgetMs, forKey: .budgetMs)
    }
}
