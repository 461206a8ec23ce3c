// A strict reader of Prometheus text exposition 0.0.4, shared by the export's tests
// (PerfReportTests) and `Perf.prometheusText()`'s (PerfTests): every line is `# HELP`, `# TYPE`
// or `name{labels} value`, with the rules node_exporter's textfile collector enforces.

/// A strict reader of text exposition 0.0.4 as node_exporter's textfile collector takes it.
public enum PrometheusGrammar {
    public struct Sample: Equatable, Sendable {
        public var name: String
        public var labels: [String: String]
        public var value: String
    }

    public static func isMetricName(_ name: Substring) -> Bool {
        guard let first = name.first, first.isASCII, first.isLetter || first == "_" || first == ":" else {
            return false
        }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ":") }
    }

    public static func isLabelName(_ name: Substring) -> Bool {
        isMetricName(name) && !name.contains(":")
    }

    /// One sample line, or nil when it breaks the grammar (a timestamp included).
    public static func sample(_ line: Substring) -> Sample? {
        var rest = line[...]
        let name = rest.prefix { $0 != "{" && $0 != " " }
        guard isMetricName(name) else { return nil }
        rest = rest.dropFirst(name.count)
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                let label = rest.prefix { $0 != "=" }
                guard isLabelName(label), labels[String(label)] == nil else { return nil }
                rest = rest.dropFirst(label.count)
                guard rest.hasPrefix("=\"") else { return nil }
                rest = rest.dropFirst(2)
                var value = ""
                while true {
                    guard let character = rest.popFirst() else { return nil }
                    if character == "\"" { break }
                    if character == "\\" {
                        switch rest.popFirst() {
                        case "\\": value.append("\\")
                        case "\"": value.append("\"")
                        case "n": value.append("\n")
                        default: return nil
                        }
                    } else {
                        value.append(character)
                    }
                }
                labels[String(label)] = value
                if rest.first == "," { rest = rest.dropFirst() } else if rest.first != "}" { return nil }
            }
            rest = rest.dropFirst()
        }
        guard rest.first == " " else { return nil }
        let value = rest.dropFirst()
        // Exactly one field after the series: a second one would be a timestamp.
        guard !value.contains(" "), ["+Inf", "-Inf", "NaN"].contains(value) || Double(value) != nil else { return nil }
        return Sample(name: String(name), labels: labels, value: String(value))
    }

    /// Every rule the exposition breaks, empty when it is valid.
    public static func problems(_ bytes: [UInt8]) -> [String] {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.isEmpty || text.hasSuffix("\n") else { return ["no final newline"] }
        var problems: [String] = []
        var types: [String: String] = [:]
        var helped: Set<String> = []
        var finished: Set<String> = []
        var current: String?
        var series: Set<String> = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            let fields = line.split(separator: " ", maxSplits: 3)
            if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") {
                guard fields.count >= 4 || (fields.count == 3 && line.hasPrefix("# HELP ")), isMetricName(fields[2])
                else {
                    problems.append("bad comment: \(line)")
                    continue
                }
                let family = String(fields[2])
                if finished.contains(family) || types[family] != nil && line.hasPrefix("# TYPE ") {
                    problems.append("family \(family) announced twice")
                }
                if line.hasPrefix("# HELP ") {
                    helped.insert(family)
                } else {
                    guard ["counter", "gauge", "histogram", "summary", "untyped"].contains(fields[3]) else {
                        problems.append("bad type: \(line)")
                        continue
                    }
                    types[family] = String(fields[3])
                }
                if current != family, let current { finished.insert(current) }
                current = family
                continue
            }
            guard let sample = sample(line) else {
                problems.append("bad sample: \(line)")
                continue
            }
            guard let family = current, let type = types[family], helped.contains(family) else {
                problems.append("sample before HELP and TYPE: \(line)")
                continue
            }
            let allowed = type == "histogram" ? ["_bucket", "_sum", "_count"].map { family + $0 } : [family]
            if !allowed.contains(sample.name) { problems.append("\(sample.name) outside its family \(family)") }
            if type == "counter", !family.hasSuffix("_total") { problems.append("counter \(family) without _total") }
            let key =
                sample.name + "|"
                + sample.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
            if !series.insert(key).inserted { problems.append("duplicate series \(key)") }
        }
        return problems + histogramProblems(samples(bytes), types: types)
    }

    /// Buckets in increasing `le`, cumulative counts never decreasing, `+Inf` equal to `_count`.
    public static func histogramProblems(_ samples: [Sample], types: [String: String]) -> [String] {
        var problems: [String] = []
        for (family, type) in types where type == "histogram" {
            let buckets = Dictionary(grouping: samples.filter { $0.name == family + "_bucket" }) { sample in
                sample.labels.filter { $0.key != "le" }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            }
            for (series, lines) in buckets {
                let bounds = lines.compactMap { $0.labels["le"] }.map {
                    $0 == "+Inf" ? Double.infinity : Double($0) ?? .nan
                }
                let counts = lines.compactMap { Double($0.value) }
                if bounds != bounds.sorted() || bounds.last != .infinity {
                    problems.append("\(family) \(series): le order")
                }
                if counts != counts.sorted() { problems.append("\(family) \(series): buckets decrease") }
                let count = samples.first {
                    $0.name == family + "_count" && $0.labels == lines[0].labels.filter { $0.key != "le" }
                }
                if count?.value != lines.last?.value { problems.append("\(family) \(series): +Inf is not _count") }
            }
        }
        return problems
    }

    /// Every sample line.
    public static func samples(_ bytes: [UInt8]) -> [Sample] {
        String(decoding: bytes, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap(sample)
    }

    /// Each family's type, from its `# TYPE` line.
    public static func families(_ bytes: [UInt8]) -> [String: String] {
        var types: [String: String] = [:]
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("# TYPE ") {
            let fields = line.split(separator: " ")
            if fields.count == 4 { types[String(fields[2])] = String(fields[3]) }
        }
        return types
    }

    /// The value of the first sample named `name` whose labels include `labels`.
    public static func value(in samples: [Sample], _ name: String, _ labels: [String: String] = [:]) -> String? {
        samples.first { sample in
            sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value }
        }?.value
    }
}
