// The span sampler's profiles as a pprof profile (gzipped profile.proto), the format `go tool
// pprof`, Pyroscope, Parca and speedscope read: where slow spans spent their over-budget time.
import Perf
import PerfCore

extension ExportInput {
    /// Whether any span line carries a profile with samples: what a pprof export needs.
    public var hasProfiles: Bool {
        events.contains { $0.kind == .span && ($0.profile?.top.contains { $0.count > 0 } ?? false) }
    }
}

/// Renders the profiles of a report's slow span lines as a gzipped pprof `Profile`
/// (github.com/google/pprof, `proto/profile.proto`).
///
/// Sample types `samples/count` (the default) and `wall/nanoseconds` (samples × the line's
/// sampling interval). One `Sample` per entry of a line's `profile.top`, its frames innermost
/// first as pprof wants them, with labels `span` (the span name), `span_id` (`<session>/scope
/// <n>` for a parent, else `<session>@<ts>`: it tells lines apart) and `wait` for a blocked
/// thread. One `Function` and one `Location` per distinct frame name; there are no mappings or
/// addresses, as the frames are already symbolized. The folded entry of the rarer stacks is one
/// frame named `other`. The same report always gives the same bytes.
///
/// ```sh
/// perf-report export performance-report.json --format pprof -o spans.pb.gz
/// go tool pprof -top spans.pb.gz
/// ```
public enum PprofExport {
    /// The name of the one frame of a stack with no frames (the `other` entry, or a sample
    /// whose stack could not be read).
    static let noStackFrame = "other"

    /// The gzipped profile.
    public static func render(_ input: ExportInput) -> [UInt8] { Gzip.wrap(profileBytes(input)) }

    /// The `Profile` message, uncompressed.
    static func profileBytes(_ input: ExportInput) -> [UInt8] {
        var strings = StringTable()
        var functions: [String: UInt64] = [:]
        var functionOrder: [String] = []
        func functionID(_ frame: String) -> UInt64 {
            if let id = functions[frame] { return id }
            let id = UInt64(functionOrder.count + 1)
            functions[frame] = id
            functionOrder.append(frame)
            return id
        }
        typealias F = PprofField
        let samplesType = (strings.index("samples"), strings.index("count"))
        let wallType = (strings.index("wall"), strings.index("nanoseconds"))
        let keys = (span: strings.index("span"), spanID: strings.index("span_id"), wait: strings.index("wait"))
        var profile = ProtobufWriter()
        for type in [samplesType, wallType] {
            profile.message(F.Profile.sampleType) {
                $0.int64(F.ValueType.type, type.0)
                $0.int64(F.ValueType.unit, type.1)
            }
        }
        var periodNanos: Int64 = 0
        var earliest = Int64.max
        var latest = Int64.min
        for event in input.events where event.kind == .span {
            guard let lineProfile = event.profile else { continue }
            let intervalNanos = nanos(ms: lineProfile.intervalMs)
            if periodNanos == 0 { periodNanos = intervalNanos }
            let spanID =
                event.scope.map { "\(event.session)/scope \($0)" }
                ?? "\(event.session)@\(LedgerTimestamp.string(ms: event.timeUnixNanos / 1_000_000))"
            var wrote = false
            for stack in lineProfile.top where stack.count > 0 {
                let frames = stack.frames.isEmpty ? [noStackFrame] : stack.frames
                let count = Int64(stack.count)
                let wall = count.multipliedReportingOverflow(by: intervalNanos)
                profile.message(F.Profile.sample) { sample in
                    // Location ids are the function ids: one location per frame name.
                    sample.packed(F.Sample.locationID, frames.map(functionID))
                    sample.packed(
                        F.Sample.value,
                        [UInt64(bitPattern: count), UInt64(bitPattern: wall.overflow ? .max : wall.partialValue)])
                    var labels = [(keys.span, event.name), (keys.spanID, spanID)]
                    if let wait = stack.wait { labels.append((keys.wait, wait)) }
                    for (key, value) in labels {
                        let valueIndex = strings.index(value)
                        sample.message(F.Sample.label) {
                            $0.int64(F.Label.key, key)
                            $0.int64(F.Label.string, valueIndex)
                        }
                    }
                }
                wrote = true
            }
            if wrote {
                earliest = min(earliest, event.startUnixNanos)
                latest = max(latest, event.timeUnixNanos)
            }
        }
        for (index, frame) in functionOrder.enumerated() {
            let id = UInt64(index + 1)
            let name = strings.index(frame)
            profile.message(F.Profile.location) { location in
                location.varint(F.Location.id, id)
                location.message(F.Location.line) { $0.varint(F.Line.functionID, id) }
            }
            profile.message(F.Profile.function) { function in
                function.varint(F.Function.id, id)
                function.int64(F.Function.name, name)
                function.int64(F.Function.systemName, name)
            }
        }
        for string in strings.strings { profile.string(F.Profile.stringTable, string) }
        if earliest <= latest {
            profile.int64(F.Profile.timeNanos, earliest)
            profile.int64(F.Profile.durationNanos, latest - earliest)
        }
        profile.message(F.Profile.periodType) {
            $0.int64(F.ValueType.type, wallType.0)
            $0.int64(F.ValueType.unit, wallType.1)
        }
        profile.int64(F.Profile.period, periodNanos)
        profile.int64(F.Profile.defaultSampleType, samplesType.0)
        return profile.bytes
    }

    /// Milliseconds as whole nanoseconds; 0 for a negative, NaN or absurd interval.
    static func nanos(ms: Double) -> Int64 {
        let value = ms * 1_000_000
        guard value.isFinite, value >= 0, value < 1e15 else { return 0 }
        return Int64(value.rounded())
    }
}

/// The field numbers of `profile.proto` that the export writes.
enum PprofField {
    enum Profile {
        static let sampleType = 1, sample = 2, location = 4, function = 5, stringTable = 6
        static let timeNanos = 9, durationNanos = 10, periodType = 11, period = 12, defaultSampleType = 14
    }
    enum ValueType { static let type = 1, unit = 2 }
    enum Sample { static let locationID = 1, value = 2, label = 3 }
    enum Label { static let key = 1, string = 2 }
    enum Location { static let id = 1, line = 4 }
    enum Line { static let functionID = 1 }
    enum Function { static let id = 1, name = 2, systemName = 3 }
}

/// The profile's string table: index 0 is the empty string, as the format requires, and each
/// string is stored once.
struct StringTable {
    private(set) var strings: [String] = [""]
    private var indices: [String: Int64] = ["": 0]

    /// The index of `string`, added at the end when new.
    mutating func index(_ string: String) -> Int64 {
        if let index = indices[string] { return index }
        let index = Int64(strings.count)
        strings.append(string)
        indices[string] = index
        return index
    }
}
