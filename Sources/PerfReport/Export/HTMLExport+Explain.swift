// The html export's answer to "why was it slow": per slow span name, the children its lines list
// (with the time outside them) and a flame graph of what the span sampler saw while it was over
// budget, from the merged `profile.top` stacks of all its lines.
import Perf
import PerfCore

extension HTMLExport {
    /// The span names shown, the busiest first.
    static let maximumExplained = 12
    /// The flame graph's coordinate width and row height.
    static let flameWidth = 1_000.0
    static let flameRowHeight = 17.0
    /// Boxes narrower than this are not drawn (their samples still count in the box below).
    static let flameMinimumWidth = 0.5
    /// Frame colours, picked by the frame name's hash so a frame has one colour on every chart.
    static let flamePalette = ["#fdb022", "#f79009", "#fd853a", "#f97066", "#fec84b", "#fb6514"]

    /// One span name's explained lines.
    struct Explained {
        var name: String
        var lines: [ExportInput.Event]
        var profiles: [SpanProfile] { lines.compactMap(\.profile) }
        var samples: Int64 { profiles.reduce(0) { $0 &+ $1.top.reduce(Int64(0)) { $0 &+ Int64(max(0, $1.count)) } } }
    }

    /// Span names whose lines list children or hold a profile, most samples first (then most
    /// lines, then by name).
    static func explained(_ input: ExportInput) -> [Explained] {
        var byName: [String: [ExportInput.Event]] = [:]
        for event in input.events where event.kind == .span && (!event.children.isEmpty || event.profile != nil) {
            byName[event.name, default: []].append(event)
        }
        return byName.map { Explained(name: $0.key, lines: $0.value) }
            .sorted { ($1.samples, $1.lines.count, $0.name) < ($0.samples, $0.lines.count, $1.name) }
    }

    /// The section, or nothing when no line lists children or holds a profile.
    static func explainSection(_ input: ExportInput, into page: inout HTMLWriter) {
        let names = explained(input)
        guard !names.isEmpty else { return }
        page.raw("<section id=\"why-slow\"><h2>Where slow spans spent their time</h2><p class=\"caption\">")
        page.text(
            "From the slow spans' ledger lines: the spans that ran inside them, and what the span sampler saw of "
                + "their thread while they were over budget (root at the bottom, width by samples).",
            limit: HTMLWriter.tooltipLimit)
        page.raw("</p>")
        for explained in names.prefix(maximumExplained) { explainedSpan(explained, into: &page) }
        if names.count > maximumExplained {
            page.raw("<p class=\"caption left-out\">")
            page.text("\(plural(names.count - maximumExplained, "more span name")) not shown.")
            page.raw("</p>")
        }
        page.raw("</section>")
    }

    static func explainedSpan(_ explained: Explained, into page: inout HTMLWriter) {
        page.raw("<h3>")
        page.text(explained.name)
        page.raw("</h3><p class=\"caption\">")
        let profiles = explained.profiles
        var caption = plural(explained.lines.count, "slow line")
        if !profiles.isEmpty {
            let suspended = profiles.reduce(0) { $0 &+ $1.suspended }
            let missed = profiles.reduce(0) { $0 &+ $1.missed }
            let interval = profiles.first.map { duration(ms: $0.intervalMs) } ?? "–"
            caption += "; \(plural(explained.samples, "sample")) every \(interval)"
            caption += " (\(count(Int64(suspended))) suspended, \(count(Int64(missed))) missed)"
            if let cause = SpanCause.cause(of: profiles) { caption += ". Top cause: " + cause.text }
        }
        page.text(caption + ".", limit: HTMLWriter.tooltipLimit)
        page.raw("</p>")
        childrenTable(explained.lines, into: &page)
        let stacks = profiles.flatMap { profile in
            profile.top.map { (frames: $0.frames, count: Int64(max(0, $0.count))) }
        }
        let graph = HTMLFlameGraph(stacks: stacks, emptyStackName: SpanProfile.otherName)
        if graph.total > 0 { flameGraph(graph, label: explained.name, into: &page) }
    }

    /// The children of every line merged by name (calls and time summed, the longest kept),
    /// heaviest first, then the time outside them.
    static func childrenTable(_ lines: [ExportInput.Event], into page: inout HTMLWriter) {
        var merged: [String: PerformanceReport.SpanChild] = [:]
        for child in lines.flatMap(\.children) {
            var entry = merged[child.name, default: .init(name: child.name, count: 0, totalMs: 0, maxMs: 0)]
            entry.count &+= child.count
            entry.totalMs += child.totalMs
            entry.maxMs = max(entry.maxMs, child.maxMs)
            merged[child.name] = entry
        }
        guard !merged.isEmpty else { return }
        let children = merged.values.sorted { ($1.totalMs, $0.name) < ($0.totalMs, $1.name) }
        var rows = children.prefix(maximumRows).map { child -> [Cell] in
            [
                .text(child.name), .number(count(child.count)), .number(duration(ms: child.totalMs)),
                .number(duration(ms: child.maxMs)),
            ]
        }
        let selfTimes = lines.compactMap(\.selfMs)
        if !selfTimes.isEmpty {
            rows.append([
                .markup("<i>self (outside its children)</i>"), .number(count(Int64(selfTimes.count))),
                .number(duration(ms: selfTimes.reduce(0, +))), .number(duration(ms: selfTimes.max() ?? 0)),
            ])
        }
        table(
            ["Child span", "Calls", "Total", "Longest"], rows, total: children.count, noun: "more child", into: &page)
    }

    static func flameGraph(_ graph: HTMLFlameGraph, label: String, into page: inout HTMLWriter) {
        let height = Double(graph.rows) * flameRowHeight
        page.open(
            "svg",
            [
                ("class", "flame"), ("viewBox", "0 0 \(HTMLWriter.number(flameWidth)) \(HTMLWriter.number(height))"),
                ("width", "100%"), ("role", "img"), ("aria-label", "Flame graph of \(label)"),
            ])
        let scale = flameWidth / Double(graph.total)
        for box in graph.boxes {
            let width = Double(box.count) * scale
            guard width >= flameMinimumWidth else { continue }
            let x = Double(box.offset) * scale
            let y = Double(graph.rows - 1 - box.depth) * flameRowHeight
            let share = Double(box.count) / Double(graph.total) * 100
            let tooltip = "\(box.name): \(plural(box.count, "sample")) (\(String(format: "%.1f", share)) %)"
            page.raw("<g>")
            page.shape(
                "rect",
                [
                    ("x", HTMLWriter.number(x)), ("y", HTMLWriter.number(y)),
                    ("width", HTMLWriter.number(max(width - 0.5, 0.1))),
                    ("height", HTMLWriter.number(flameRowHeight - 1)), ("fill", flameColour(box)),
                ], tooltip: tooltip)
            // A name fits at about 6.5 units a character; narrower boxes keep it in the tooltip.
            let characters = Int((width - 6) / 6.5)
            if characters >= 3 {
                page.open("text", [("x", HTMLWriter.number(x + 3)), ("y", HTMLWriter.number(y + flameRowHeight - 5))])
                page.text(box.name, limit: characters)
                page.close("text")
            }
            page.raw("</g>")
        }
        page.close("svg")
    }

    /// Grey for the root and the folded `other` entry, else a warm colour by the name's hash.
    static func flameColour(_ box: HTMLFlameGraph.Box) -> String {
        if box.depth == 0 || box.name == SpanProfile.otherName { return "#d0d5dd" }
        return flamePalette[Int(ExportIDs.fnv1a(box.name) % UInt64(flamePalette.count))]
    }
}
