// The html export's timeline: one SVG, a block per session with its own time axis, a lane per
// thread, spans as rects, hangs as red bars, notes as ticks.
import Perf

extension HTMLExport {
    /// Geometry of the timeline, in CSS pixels: wide enough to read at 1400 px.
    enum TimelineGeometry {
        static let width = 1320.0
        static let plotLeft = 210.0
        static let plotRight = 1300.0
        static let headerHeight = 26.0
        static let axisHeight = 20.0
        static let rowHeight = 12.0
        static let spanHeight = 10.0
        static let lanePadding = 4.0
        static let blockGap = 18.0
    }

    /// The timeline section: the SVG and what it left out, or why there is none.
    static func timelineSection(_ input: ExportInput, into page: inout HTMLWriter) {
        page.raw("<section id=\"timeline\"><h2>Timeline</h2>")
        guard input.hasIntervals else {
            page.raw("<p class=\"notice\">No span intervals in this report; histograms only. ")
            page.raw("The flight recorder that keeps the most recent spans is newer than this report.</p></section>")
            return
        }
        let layout = HTMLTimelineLayout(input)
        page.raw("<div class=\"legend\">")
        for (kind, label) in [
            ("span", "span"), ("span over", "over budget"), ("span fail", "not success"), ("hang", "hang"),
            ("hitch", "hitch"), ("note", "note"),
        ] {
            page.raw("<span><i class=\"swatch \(kind)\"></i>\(label)</span>")
        }
        page.raw("</div><div class=\"scroll\">")
        timelineSVG(layout, into: &page)
        page.raw("</div>")
        var left: [String] = []
        for block in layout.blocks {
            let recorded = block.windowEnd - block.recordedStart
            if block.olderThanWindow > 0 {
                left.append(
                    "Session \(block.session): showing the most recent \(duration(nanos: block.windowEnd - block.windowStart))"
                        + " of \(duration(nanos: recorded)); \(plural(block.olderThanWindow, "earlier span")) not drawn."
                )
            }
            if block.hiddenLanes > 0 {
                left.append(
                    "Session \(block.session): \(plural(block.hiddenLanes, "quieter thread")) "
                        + "(\(plural(block.spansOnHiddenLanes, "span"))) not drawn.")
            }
        }
        if layout.overRectCap > 0 {
            left.append(
                "\(plural(layout.overRectCap, "older span")) not drawn; the page draws at most "
                    + "\(count(Int64(HTMLTimelineLayout.maximumSpanRects))) spans.")
        }
        page.raw("<p class=\"caption\">")
        page.text("\(plural(layout.drawnSpans, "span")) drawn from \(plural(input.intervals.count, "recorded span")).")
        page.raw("</p>")
        for line in left {
            page.raw("<p class=\"caption left-out\">")
            page.text(line, limit: 400)
            page.raw("</p>")
        }
        page.raw("</section>")
    }

    static func timelineSVG(_ layout: HTMLTimelineLayout, into page: inout HTMLWriter) {
        typealias G = TimelineGeometry
        let height = layout.blocks.reduce(0.0) { total, block in
            total + G.headerHeight + G.axisHeight + block.lanes.reduce(0.0) { $0 + laneHeight($1) } + G.blockGap
        }
        let w = HTMLWriter.number(G.width)
        let h = HTMLWriter.number(max(height, 1))
        page.raw(
            "<svg class=\"timeline\" width=\"\(w)\" height=\"\(h)\" "
                + "viewBox=\"0 0 \(w) \(h)\" role=\"img\" aria-label=\"Timeline of spans and hangs by thread\">")
        var top = 0.0
        for block in layout.blocks {
            top = timelineBlock(block, top: top, into: &page)
        }
        page.raw("</svg>")
    }

    static func laneHeight(_ lane: HTMLTimelineLayout.Lane) -> Double {
        Double(lane.rows) * TimelineGeometry.rowHeight + 2 * TimelineGeometry.lanePadding
    }

    /// Draws one session's block from `top`; returns where the next one starts.
    static func timelineBlock(_ block: HTMLTimelineLayout.Block, top: Double, into page: inout HTMLWriter) -> Double {
        typealias G = TimelineGeometry
        let n = HTMLWriter.number
        let windowNanos = max(1, HTMLTimelineLayout.add(block.windowEnd, -block.windowStart))
        let window = Double(windowNanos)
        let x = { (time: Int64) -> Double in
            let offset = Double(HTMLTimelineLayout.add(time, -block.windowStart))
            return min(G.plotRight, max(G.plotLeft, G.plotLeft + offset / window * (G.plotRight - G.plotLeft)))
        }
        let lanesHeight = block.lanes.reduce(0.0) { $0 + laneHeight($1) }
        let axisTop = top + G.headerHeight
        let lanesTop = axisTop + G.axisHeight
        let bottom = lanesTop + lanesHeight

        page.raw("<text class=\"block-title\" x=\"0\" y=\"\(n(top + 17))\">")
        page.text("Session \(block.session)", limit: 48)
        page.raw("<tspan class=\"status-\(statusClass(block.status))\" dx=\"10\">")
        page.text(block.status.rawValue, limit: 24)
        page.raw("</tspan><tspan class=\"muted\" dx=\"10\">")
        page.text("\(time(unixNanos: block.windowStart)) · \(duration(nanos: windowNanos)) shown")
        page.raw("</tspan></text>")

        for (offset, label) in axisTicks(windowNanos: windowNanos) {
            let tickX = n(x(HTMLTimelineLayout.add(block.windowStart, offset)))
            page.raw(
                "<line class=\"grid\" x1=\"\(tickX)\" x2=\"\(tickX)\" y1=\"\(n(axisTop + 14))\" y2=\"\(n(bottom))\"/>"
                    + "<text class=\"tick\" x=\"\(tickX)\" y=\"\(n(axisTop + 11))\">\(label)</text>")
        }

        var laneTop = lanesTop
        for (index, lane) in block.lanes.enumerated() {
            let height = laneHeight(lane)
            page.raw(
                "<rect class=\"lane\(index % 2 == 0 ? "" : " odd")\" x=\"0\" y=\"\(n(laneTop))\" "
                    + "width=\"\(n(G.width))\" height=\"\(n(height))\"/>")
            page.raw("<text class=\"lane-label\" x=\"6\" y=\"\(n(laneTop + G.lanePadding + 9))\">")
            page.text(lane.name, limit: 24)
            if let tid = lane.threadID { page.raw("<tspan class=\"muted\"> \(tid)</tspan>") }
            page.raw("<title>")
            page.text(lane.threadID.map { "\(lane.name) (tid \($0))" } ?? lane.name, limit: HTMLWriter.tooltipLimit)
            page.raw("</title></text>")
            for placed in lane.spans {
                let span = placed.interval
                let left = x(span.startUnixNanos)
                let width = max(1, x(HTMLTimelineLayout.end(span)) - left)
                let y = laneTop + G.lanePadding + Double(placed.row) * G.rowHeight
                page.shape(
                    "rect",
                    [
                        ("class", spanClass(span)), ("x", n(left)), ("y", n(y)), ("width", n(width)),
                        ("height", n(G.spanHeight)),
                    ], tooltip: spanTooltip(span))
            }
            for hang in lane.hangs {
                let left = x(HTMLTimelineLayout.start(hang))
                let width = max(2, x(hang.timeUnixNanos) - left)
                page.raw("<g class=\"\(hang.kind == .hang ? "hang" : "hitch")\"><title>")
                page.text(hangTooltip(hang), limit: HTMLWriter.tooltipLimit)
                page.raw(
                    "</title><rect class=\"wash\" x=\"\(n(left))\" y=\"\(n(laneTop))\" width=\"\(n(width))\" "
                        + "height=\"\(n(height))\"/><rect x=\"\(n(left))\" y=\"\(n(laneTop + height - 3))\" "
                        + "width=\"\(n(width))\" height=\"3\"/>")
                // A hang wide enough to hold its name says what it is without a hover.
                if hang.kind == .hang, width >= 90 {
                    page.raw("<text class=\"hang-label\" x=\"\(n(left + 4))\" y=\"\(n(laneTop + 11))\">")
                    page.text("\(hang.fatal ? "fatal hang" : "hang") \(hang.durationMs.map(duration(ms:)) ?? "")")
                    page.raw("</text>")
                }
                page.raw("</g>")
            }
            laneTop += height
        }

        for note in block.notes {
            let noteX = n(x(note.timeUnixNanos))
            page.raw("<g class=\"note\"><title>")
            page.text("note \(note.name) at \(time(unixNanos: note.timeUnixNanos))", limit: HTMLWriter.tooltipLimit)
            page.raw(
                "</title><line x1=\"\(noteX)\" x2=\"\(noteX)\" y1=\"\(n(axisTop + 14))\" y2=\"\(n(bottom))\"/>"
                    + "<path d=\"M\(n(x(note.timeUnixNanos) - 4)) \(n(axisTop + 12))h8l-4 6z\"/></g>")
        }
        return bottom + G.blockGap
    }

    /// Tick offsets from the window start, 1-2-5 steps, about eight across, with labels.
    static func axisTicks(windowNanos: Int64) -> [(Int64, String)] {
        let target = Double(max(1, windowNanos)) / 8
        var step = max(1, windowNanos / 8 + 1)
        search: for exponent in 0...17 {
            var power: Int64 = 1
            for _ in 0..<exponent { power *= 10 }
            for factor: Int64 in [1, 2, 5] where Double(power * factor) >= target {
                step = power * factor
                break search
            }
        }
        return stride(from: Int64(0), through: windowNanos, by: Int(step)).map {
            ($0, $0 == 0 ? "0" : "+" + duration(nanos: $0))
        }
    }

    static func spanClass(_ span: ExportInput.Interval) -> String {
        if span.exit != .success { return "span fail" }
        if isOverBudget(span) { return "span over" }
        return "span"
    }

    static func isOverBudget(_ span: ExportInput.Interval) -> Bool {
        guard let budget = span.budgetMs else { return false }
        return Double(span.durationNanos) > budget * 1e6
    }

    static func spanTooltip(_ span: ExportInput.Interval) -> String {
        var text = "\(span.name) · \(duration(nanos: span.durationNanos))"
        if let budget = span.budgetMs {
            text += " (budget \(duration(ms: budget))\(isOverBudget(span) ? ", over" : ""))"
        }
        if span.exit != .success { text += " · \(span.exit)" }
        return text + " · at \(time(unixNanos: span.startUnixNanos))"
    }

    static func hangTooltip(_ hang: ExportInput.Event) -> String {
        var text = "\(hang.fatal ? "fatal " : "")\(hang.kind) \(hang.durationMs.map(duration(ms:)) ?? "")"
        text += " on \(hang.name)"
        if let thread = hang.thread { text += ", thread \(thread)" }
        if let culprit = hang.culprit { text += " · culprit: \(FunctionName.readable(culprit))" }
        return text
    }
}
