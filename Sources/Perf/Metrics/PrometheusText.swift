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
            append(suffix: suffix, series: Self.openSeries(labels), le: nil, value)
        }

        /// A histogram's cumulative `_bucket` series for `bounds` (seconds) and `+Inf`, then
        /// `_sum` and `_count`.
        ///
        /// - Parameter cumulativeCount: How many observations are at or below a bound in seconds.
        package mutating func histogram(
            _ labels: [Label], bounds: [(text: String, seconds: Double)], cumulativeCount: (Double) -> UInt64,
            count: UInt64, sumSeconds: Double
        ) {
            // The labels are escaped once for the series' 19 lines, not once per line.
            let series = Self.openSeries(labels)
            var previous: UInt64 = 0
            for bound in bounds {
                // Never above the total and never below the previous bucket, whatever the source.
                previous = min(max(previous, cumulativeCount(bound.seconds)), count)
                append(suffix: "_bucket", series: series, le: bound.text, .integer(previous))
            }
            append(suffix: "_bucket", series: series, le: "+Inf", .integer(count))
            append(suffix: "_sum", series: series, le: nil, .double(sumSeconds))
            append(suffix: "_count", series: series, le: nil, .integer(count))
        }

        /// `{a="x",b="y"` (no closing brace, so `le` can follow), or nothing without labels.
        private static func openSeries(_ labels: [Label]) -> [UInt8] {
            var series: [UInt8] = []
            for label in labels {
                series.append(UInt8(ascii: series.isEmpty ? "{" : ","))
                appendLabel(label.name, label.value, into: &series)
            }
            return series
        }

        private static func appendLabel(_ name: String, _ value: String, into bytes: inout [UInt8]) {
            bytes.append(contentsOf: name.utf8)
            bytes.append(contentsOf: "=\"".utf8)
            PrometheusText.appendEscaped(value, quotes: true, into: &bytes)
            bytes.append(UInt8(ascii: "\""))
        }

        /// `name_suffix{series,le="bound"} value` and a newline.
        private mutating func append(suffix: String, series: [UInt8], le: String?, _ value: PrometheusText.Value) {
            lines.append(contentsOf: name.utf8)
            lines.append(contentsOf: suffix.utf8)
            if let le {
                lines.append(contentsOf: series)
                lines.append(UInt8(ascii: series.isEmpty ? "{" : ","))
                Self.appendLabel("le", le, into: &lines)
                lines.append(UInt8(ascii: "}"))
            } else if !series.isEmpty {
                lines.append(contentsOf: series)
                lines.append(UInt8(ascii: "}"))
            }
            lines.append(UInt8(ascii: " "))
            value.append(to: &lines)
            lines.append(UInt8(ascii: "\n"))
        }
    }

    /// A sample value.
    package enum Value {
        case integer(UInt64)
        case double(Double)

        package var text: String {
            var out: [UInt8] = []
            append(to: &out)
            return String(decoding: out, as: UTF8.self)
        }

        /// Appends the value's one spelling.
        func append(to out: inout [UInt8]) {
            switch self {
            case .integer(let value):
                // Digits written in place: a String per sample line was most of a scrape's cost.
                guard value > 0 else { return out.append(UInt8(ascii: "0")) }
                let start = out.count
                var rest = value
                while rest > 0 {
                    out.append(UInt8(ascii: "0") + UInt8(rest % 10))
                    rest /= 10
                }
                out[start...].reverse()
            case .double(let value):
                guard value.isFinite else {
                    return out.append(contentsOf: (value.isNaN ? "NaN" : (value > 0 ? "+Inf" : "-Inf")).utf8)
                }
                LedgerEncoder.appendDouble(value, into: &out)
            }
        }
    }

    /// A label value with `\`, `"` and newline escaped, as the format requires.
    package static func escapeLabelValue(_ value: String) -> String { escape(value, quotes: true) }

    /// HELP text with `\` and newline escaped.
    package static func escapeHelp(_ help: String) -> String { escape(help, quotes: false) }

    private static func escape(_ value: String, quotes: Bool) -> String {
        var escaped: [UInt8] = []
        appendEscaped(value, quotes: quotes, into: &escaped)
        return String(decoding: escaped, as: UTF8.self)
    }

    /// `\`, newline and (with `quotes`) `"` escaped; every other byte as it is (the three are
    /// ASCII, so no byte of a multi-byte character is ever taken for one).
    static func appendEscaped(_ value: String, quotes: Bool, into bytes: inout [UInt8]) {
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\"") where quotes: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            default: bytes.append(byte)
            }
        }
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
