// Writing Prometheus text exposition (format 0.0.4): families with HELP and TYPE, escaped label
// values, one spelling per number, and never a timestamp (node_exporter's textfile collector
// rejects a whole file that has one). One writer for the report export (PerfReport) and the live
// `Perf.prometheusText()`, so both spell every number, label and bucket alike.
import PerfCore

/// A text exposition being written, one family at a time so each family's samples stay together.
package struct PrometheusText {
    /// A label's name and (unescaped) value.
    package typealias Label = (name: String, value: String)

    package private(set) var bytes: [UInt8] = []

    package init() {}

    /// Writes `# HELP` and `# TYPE` and the samples `body` adds; nothing when it adds none, so
    /// no family is announced without samples.
    package mutating func family(_ name: String, type: String, help: String, _ body: (inout Family) -> Void) {
        var family = Family(name: name)
        body(&family)
        guard !family.lines.isEmpty else { return }
        bytes.append(contentsOf: "# HELP \(name) \(Self.escapeHelp(help))\n# TYPE \(name) \(type)\n".utf8)
        bytes.append(contentsOf: family.lines)
    }

    /// The samples of one family.
    package struct Family {
        package let name: String
        fileprivate(set) var lines: [UInt8] = []

        /// `name{labels} value` (or `name_suffix{…}` for a histogram's series).
        package mutating func sample(suffix: String = "", _ labels: [Label], _ value: PrometheusText.Value) {
            lines.append(contentsOf: (name + suffix).utf8)
            if !labels.isEmpty {
                lines.append(UInt8(ascii: "{"))
                for (index, label) in labels.enumerated() {
                    if index > 0 { lines.append(UInt8(ascii: ",")) }
                    lines.append(contentsOf: "\(label.name)=\"\(PrometheusText.escapeLabelValue(label.value))\"".utf8)
                }
                lines.append(UInt8(ascii: "}"))
            }
            lines.append(UInt8(ascii: " "))
            lines.append(contentsOf: value.text.utf8)
            lines.append(UInt8(ascii: "\n"))
        }

        /// A histogram's cumulative `_bucket` series for `bounds` (seconds) and `+Inf`, then
        /// `_sum` and `_count`.
        ///
        /// - Parameter cumulativeCount: How many observations are at or below a bound in seconds.
        package mutating func histogram(
            _ labels: [Label], bounds: [(text: String, seconds: Double)], cumulativeCount: (Double) -> UInt64,
            count: UInt64, sumSeconds: Double
        ) {
            var previous: UInt64 = 0
            for bound in bounds {
                // Never above the total and never below the previous bucket, whatever the source.
                previous = min(max(previous, cumulativeCount(bound.seconds)), count)
                sample(suffix: "_bucket", labels + [("le", bound.text)], .integer(previous))
            }
            sample(suffix: "_bucket", labels + [("le", "+Inf")], .integer(count))
            sample(suffix: "_sum", labels, .double(sumSeconds))
            sample(suffix: "_count", labels, .integer(count))
        }
    }

    /// A sample value.
    package enum Value {
        case integer(UInt64)
        case double(Double)

        package var text: String {
            switch self {
            case .integer(let value): return String(value)
            case .double(let value):
                guard value.isFinite else { return value.isNaN ? "NaN" : (value > 0 ? "+Inf" : "-Inf") }
                var out: [UInt8] = []
                LedgerEncoder.appendDouble(value, into: &out)
                return String(decoding: out, as: UTF8.self)
            }
        }
    }

    /// A label value with `\`, `"` and newline escaped, as the format requires.
    package static func escapeLabelValue(_ value: String) -> String { escape(value, quotes: true) }

    /// HELP text with `\` and newline escaped.
    package static func escapeHelp(_ help: String) -> String { escape(help, quotes: false) }

    private static func escape(_ value: String, quotes: Bool) -> String {
        var escaped = ""
        escaped.reserveCapacity(value.utf8.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\"" where quotes: escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// Histogram bucket upper bounds, fixed so series from every machine aggregate: as written
    /// in `le`, and in seconds.
    package static let bounds: [(text: String, seconds: Double)] = [
        "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5",
        "10", "30", "60",
    ].map { ($0, Double($0)!) }
}

extension PrometheusText.Family {
    /// A latency histogram's cumulative buckets over ``PrometheusText/bounds``, in seconds.
    package mutating func histogram(_ labels: [PrometheusText.Label], _ histogram: LatencyHistogram) {
        self.histogram(
            labels, bounds: PrometheusText.bounds,
            cumulativeCount: { histogram.count(atOrBelowNanos: UInt64(($0 * 1e9).rounded())) }, count: histogram.count,
            sumSeconds: Double(histogram.sumNanos) / 1e9)
    }
}
