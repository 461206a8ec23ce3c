// The probe hits of a `perf script` text, and what `perf-report attach` makes of them: a Chrome
// trace (Perfetto UI, chrome://tracing) and a summary per span name.
import Perf

/// One probe hit as `perf script -F pid,tid,time,event,trace --ns` prints it.
package struct ProbeHit: Sendable, Equatable {
    package var probe: String
    package var pid: Int64
    package var tid: Int64
    /// perf's timestamp of the hit, in nanoseconds.
    package var timeNanos: Int64
    /// The probe's arguments by name (`name`, `ns`, `culprit`), strings without their quotes.
    package var arguments: [String: String]

    package func number(_ key: String) -> Int64 { arguments[key].flatMap { Int64($0) } ?? 0 }
}

package enum ProbeScript {
    /// The hits of `text` whose events belong to `group`; `probeOfEvent` maps `span_end_3` to
    /// `span_end`.
    package static func hits(_ text: String, group: String, probeOfEvent: [String: String]) -> [ProbeHit] {
        var hits: [ProbeHit] = []
        for line in text.split(separator: "\n") {
            guard let marker = line.range(of: " \(group):") else { continue }
            let head = line[..<marker.lowerBound].split(separator: " ")
            var pid: Int64 = 0, tid: Int64 = 0, time: Int64 = 0
            for token in head {
                if token.contains("/") {
                    let ids = token.split(separator: "/")
                    pid = Int64(ids.first ?? "") ?? 0
                    tid = Int64(ids.last ?? "") ?? 0
                } else if token.hasSuffix(":"), token.contains(".") {
                    time = nanos(token.dropLast())
                }
            }
            let afterGroup = line[marker.upperBound...]
            guard let colon = afterGroup.firstIndex(of: ":") else { continue }
            let event = String(afterGroup[..<colon])
            guard let probe = probeOfEvent[event] else { continue }
            hits.append(
                ProbeHit(
                    probe: probe, pid: pid, tid: tid, timeNanos: time,
                    arguments: arguments(afterGroup[afterGroup.index(after: colon)...])))
        }
        return hits
    }

    /// `12345.678901234` seconds as nanoseconds.
    static func nanos(_ text: Substring) -> Int64 {
        let parts = text.split(separator: ".", maxSplits: 1)
        let seconds = Int64(parts.first ?? "") ?? 0
        var fraction = parts.count > 1 ? String(parts[1].prefix(9)) : ""
        while fraction.count < 9 { fraction += "0" }
        return seconds * 1_000_000_000 + (Int64(fraction) ?? 0)
    }

    /// `(55e0b4c02ccc) name="probe.short" ns=2001956 …` as a dictionary. A quoted value ends at
    /// the quote followed by ` key=` or the end of the line, so it may hold spaces and quotes.
    static func arguments(_ text: Substring) -> [String: String] {
        var result: [String: String] = [:]
        var rest = text.drop { $0 == " " }
        if rest.first == "(" { rest = rest.drop { $0 != ")" }.dropFirst() }
        while true {
            rest = rest.drop { $0 == " " }
            guard let equals = rest.firstIndex(of: "=") else { break }
            let key = String(rest[..<equals])
            var value = rest[rest.index(after: equals)...]
            if value.first == "\"" {
                value = value.dropFirst()
                var end = value.endIndex
                var search = value.startIndex
                while let quote = value[search...].firstIndex(of: "\"") {
                    let after = value[value.index(after: quote)...]
                    if after.isEmpty || after.range(of: #"^ [a-z_]+="#, options: .regularExpression) != nil {
                        end = quote
                        break
                    }
                    search = value.index(after: quote)
                }
                result[key] = String(value[..<end])
                rest = end < value.endIndex ? value[value.index(after: end)...] : value[value.endIndex...]
            } else {
                let end = value.firstIndex(of: " ") ?? value.endIndex
                result[key] = String(value[..<end])
                rest = value[end...]
            }
        }
        return result
    }
}

/// Count, percentiles, max and over-budget count of one span name's `span_end` hits.
package struct ProbeSpanSummary: Sendable, Equatable {
    package var name: String
    package var count: Int
    package var p50Nanos: Int64
    package var p95Nanos: Int64
    package var maxNanos: Int64
    package var overBudget: Int

    /// One summary per span name, by name.
    package static func summaries(_ hits: [ProbeHit]) -> [ProbeSpanSummary] {
        var durations: [String: [Int64]] = [:]
        var over: [String: Int] = [:]
        for hit in hits where hit.probe == "span_end" {
            let name = hit.arguments["name"] ?? "?"
            durations[name, default: []].append(hit.number("ns"))
            over[name, default: 0] += hit.number("over") != 0 ? 1 : 0
        }
        return durations.keys.sorted().map { name in
            let sorted = durations[name, default: []].sorted()
            // Nearest rank: the smallest duration at or above the fraction of the calls.
            func rank(_ fraction: Double) -> Int64 {
                sorted[max(0, min(sorted.count - 1, Int((fraction * Double(sorted.count)).rounded(.up)) - 1))]
            }
            return ProbeSpanSummary(
                name: name, count: sorted.count, p50Nanos: rank(0.5), p95Nanos: rank(0.95), maxNanos: sorted.last ?? 0,
                overBudget: over[name, default: 0])
        }
    }
}

/// The hits as Chrome Trace Event JSON: a complete event (`X`) per span end on its thread's lane,
/// an instant per hang, hitch, note, keyed span begin and session start or end.
package enum ProbeTrace {
    package static func render(_ hits: [ProbeHit], pid: Int32, executable: String, seconds: Double) -> [UInt8] {
        let origin = hits.map { $0.timeNanos - ($0.probe == "span_end" ? $0.number("ns") : 0) }.min() ?? 0
        func micros(_ nanos: Int64) -> ReportJSON { .double(Double(nanos - origin) / 1_000) }
        var events: [ReportJSON] = [
            .object([
                "ph": .string("M"), "name": .string("process_name"), "pid": .int(Int64(pid)), "tid": .int(Int64(pid)),
                "args": .object(["name": .string("\(executable) (pid \(pid))")]),
            ])
        ]
        for hit in hits.sorted(by: { $0.timeNanos < $1.timeNanos }) {
            var event: [String: ReportJSON] = ["pid": .int(hit.pid), "tid": .int(hit.tid)]
            switch hit.probe {
            case "span_end":
                let duration = hit.number("ns")
                event["ph"] = .string("X")
                event["name"] = .string(hit.arguments["name"] ?? "?")
                event["cat"] = .string("span")
                event["ts"] = micros(hit.timeNanos - duration)
                event["dur"] = .double(Double(duration) / 1_000)
                event["args"] = .object([
                    "budgetNs": .int(hit.number("budget_ns")), "exit": .int(hit.number("exit")),
                    "overBudget": .bool(hit.number("over") != 0),
                ])
            case "hang", "hitch":
                event["ph"] = .string("i")
                event["s"] = .string("t")
                event["name"] = .string("\(hit.probe) \(hit.arguments["target"] ?? "?")")
                event["cat"] = .string(hit.probe)
                event["ts"] = micros(hit.timeNanos)
                event["args"] = .object([
                    "lowerMs": .int(hit.number("lower_ms")), "upperMs": .int(hit.number("upper_ms")),
                    "culprit": .string(hit.arguments["culprit"] ?? ""),
                ])
            default:
                event["ph"] = .string("i")
                event["s"] = .string(hit.probe.hasPrefix("session") ? "p" : "t")
                event["name"] = .string(hit.arguments["name"].map { "\(hit.probe) \($0)" } ?? hit.probe)
                event["cat"] = .string(hit.probe)
                event["ts"] = micros(hit.timeNanos)
            }
            events.append(.object(event))
        }
        let document = ReportJSON.object([
            "traceEvents": .array(events), "displayTimeUnit": .string("ms"),
            "otherData": .object([
                "exporter": .string("perf-report attach"), "pid": .int(Int64(pid)), "executable": .string(executable),
                "seconds": .double(seconds), "timeUnit": .string("ts and dur are microseconds after the first event"),
                "spans": .array(
                    ProbeSpanSummary.summaries(hits).map {
                        .object([
                            "name": .string($0.name), "count": .int(Int64($0.count)), "p50Ns": .int($0.p50Nanos),
                            "p95Ns": .int($0.p95Nanos), "maxNs": .int($0.maxNanos),
                            "overBudget": .int(Int64($0.overBudget)),
                        ])
                    }),
            ]),
        ])
        var bytes = document.bytes
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }
}
