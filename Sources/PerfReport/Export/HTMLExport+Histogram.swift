import Foundation
// Per-span latency histograms for the html export: small SVG bar charts on a log-scale time
// axis, with the budget as a labelled vertical line and the quantiles listed.
import Perf
import PerfCore

extension HTMLExport {
    /// Geometry of one chart, in CSS pixels.
    enum HistogramGeometry {
        static let width = 400.0
        static let height = 150.0
        static let plotLeft = 10.0
        static let plotRight = 390.0
        static let plotTop = 26.0
        static let plotBottom = 118.0
        /// Display bins across the axis: the histogram's 64 sub-buckets per octave are far finer
        /// than a 400 px chart can show.
        static let bins = 40
    }

    /// Span histograms drawn; the rest are counted on the page and listed in the spans table.
    static let maximumHistograms = 12

    /// A log-scale x axis over nanoseconds, at least one decade wide.
    struct LogAxis: Equatable {
        /// The axis bounds, nanoseconds.
        var lowerNanos: Double, upperNanos: Double

        /// An axis around `[minNanos, maxNanos]` and the budget, with a margin on each side.
        init(minNanos: Double, maxNanos: Double, budgetNanos: Double?) {
            var low = max(100, minNanos)
            var high = max(low, maxNanos)
            if let budget = budgetNanos, budget.isFinite, budget > 0 {
                low = min(low, max(100, budget))
                high = max(high, budget)
            }
            low /= 1.4
            high *= 1.4
            if high / low < 10 {
                let middle = (low * high).squareRoot()
                low = middle / 10.0.squareRoot()
                high = middle * 10.0.squareRoot()
            }
            lowerNanos = low
            upperNanos = min(high, 1e13)
            if upperNanos <= lowerNanos { upperNanos = lowerNanos * 10 }
        }

        /// The x coordinate of `nanos`, clamped to the plot.
        func x(_ nanos: Double) -> Double {
            typealias G = HistogramGeometry
            let fraction = (log10(max(nanos, 1)) - log10(lowerNanos)) / (log10(upperNanos) - log10(lowerNanos))
            return G.plotLeft + min(1, max(0, fraction)) * (G.plotRight - G.plotLeft)
        }

        /// The display bin a value falls in.
        func bin(_ nanos: Double) -> Int {
            let fraction = (log10(max(nanos, 1)) - log10(lowerNanos)) / (log10(upperNanos) - log10(lowerNanos))
            guard fraction.isFinite else { return 0 }
            return min(HistogramGeometry.bins - 1, Int(min(1, max(0, fraction)) * Double(HistogramGeometry.bins)))
        }

        /// The value at the left edge of display bin `index`.
        func binStart(_ index: Int) -> Double {
            lowerNanos * pow(upperNanos / lowerNanos, Double(index) / Double(HistogramGeometry.bins))
        }

        /// 1-2-5 ticks when the axis spans under three decades, decades otherwise.
        var ticks: [Double] {
            let decades = (0...13).map { pow(10, Double($0)) }.filter { $0 >= lowerNanos && $0 <= upperNanos }
            guard decades.count < 3 else { return decades }
            return (0...13).flatMap { exponent in [1.0, 2, 5].map { $0 * pow(10, Double(exponent)) } }
                .filter { $0 >= lowerNanos && $0 <= upperNanos }
        }
    }

    /// The span histograms, busiest first, then the table of every span.
    static func histogramsSection(_ input: ExportInput, into page: inout HTMLWriter) {
        page.raw("<section id=\"histograms\"><h2>Span latency</h2>")
        let spans = input.spans.sorted { ($1.count, $0.name) < ($0.count, $1.name) }
        if spans.isEmpty {
            page.raw("<p class=\"notice\">No spans in this report.</p></section>")
            return
        }
        page.raw("<div class=\"cards\">")
        for span in spans.prefix(maximumHistograms) { spanCard(span, into: &page) }
        page.raw("</div>")
        if spans.count > maximumHistograms {
            page.raw("<p class=\"caption left-out\">")
            page.text(
                "\(plural(spans.count - maximumHistograms, "quieter span name")) not charted; "
                    + "every span is in the table below.")
            page.raw("</p>")
        }
        spansTable(spans, into: &page)
        page.raw("</section>")
    }

    static func spanCard(_ span: ExportInput.SpanStatistics, into page: inout HTMLWriter) {
        page.raw("<figure class=\"hist\"><figcaption><b>")
        page.text(span.name, limit: 48)
        page.raw("</b><span>")
        var facts = plural(span.count, "call")
        if let budget = span.budgetMs {
            facts += " · budget \(duration(ms: budget)) · \(count(span.overBudget)) over"
        }
        if let orphans = orphans(span) { facts += " · " + orphans }
        page.text(facts)
        page.raw("</span></figcaption>")
        if onlyUnknownOrphans(span) {
            page.raw("<p class=\"notice small\">No duration: left open by a crashed process.</p></figure>")
            return
        }
        if let histogram = span.histogram, !histogram.isEmpty {
            histogramChart(histogram, budgetMs: span.budgetMs, label: span.name, into: &page)
        } else {
            page.raw(
                "<p class=\"notice small\">No distribution in this report: only the slow calls the ledger kept.</p>")
        }
        page.raw("<p class=\"quantiles\">")
        page.text(
            "p50 \(duration(ms: span.p50Ms)) · p95 \(duration(ms: span.p95Ms)) · p99 \(duration(ms: span.p99Ms))"
                + " · max \(duration(ms: span.maxMs))")
        page.raw("</p></figure>")
    }

    /// One histogram as an SVG bar chart; `budgetMs` adds the budget line.
    static func histogramChart(
        _ histogram: LatencyHistogram, budgetMs: Double?, label: String, into page: inout HTMLWriter
    ) {
        typealias G = HistogramGeometry
        let n = HTMLWriter.number
        let budgetNanos = budgetMs.flatMap { $0.isFinite && $0 > 0 ? $0 * 1e6 : nil }
        let axis = LogAxis(
            minNanos: Double(histogram.minNanos), maxNanos: Double(histogram.maxNanos), budgetNanos: budgetNanos)
        var bins = [UInt64](repeating: 0, count: G.bins)
        for bucket in histogram.nonEmptyBuckets {
            let middle = (Double(bucket.lowerNanos) * Double(max(bucket.upperNanos, bucket.lowerNanos))).squareRoot()
            bins[axis.bin(middle)] &+= bucket.count
        }
        let tallest = Double(bins.max() ?? 1)
        page.open(
            "svg",
            [
                ("class", "histogram"), ("width", n(G.width)), ("height", n(G.height)),
                ("viewBox", "0 0 \(n(G.width)) \(n(G.height))"), ("role", "img"),
                ("aria-label", HTMLWriter.clipped("Latency histogram of \(label)", HTMLWriter.visibleLimit)),
                ("data-lo-ns", n(axis.lowerNanos)), ("data-hi-ns", n(axis.upperNanos)),
            ])
        let binWidth = (G.plotRight - G.plotLeft) / Double(G.bins)
        for (index, binCount) in bins.enumerated() where binCount > 0 {
            let height = max(1, Double(binCount) / tallest * (G.plotBottom - G.plotTop))
            page.shape(
                "rect",
                [
                    ("class", "bar"), ("x", n(G.plotLeft + Double(index) * binWidth)), ("y", n(G.plotBottom - height)),
                    ("width", n(max(1, binWidth - 1))), ("height", n(height)),
                ],
                tooltip: "\(binCount) calls, \(duration(ms: axis.binStart(index) / 1e6))"
                    + "–\(duration(ms: axis.binStart(index + 1) / 1e6))")
        }
        page.raw(
            "<line class=\"axis\" x1=\"\(n(G.plotLeft))\" x2=\"\(n(G.plotRight))\" "
                + "y1=\"\(n(G.plotBottom))\" y2=\"\(n(G.plotBottom))\"/>")
        for tick in axis.ticks {
            let tickX = n(axis.x(tick))
            page.raw(
                "<line class=\"axis\" x1=\"\(tickX)\" x2=\"\(tickX)\" y1=\"\(n(G.plotBottom))\" "
                    + "y2=\"\(n(G.plotBottom + 4))\"/><text class=\"tick\" x=\"\(tickX)\" "
                    + "y=\"\(n(G.plotBottom + 16))\">\(duration(ms: tick / 1e6))</text>")
        }
        for (name, quantile) in [("p50", 0.5), ("p95", 0.95), ("p99", 0.99)] {
            let valueNanos = Double(histogram.quantile(quantile))
            let markX = axis.x(valueNanos)
            page.shape(
                "path", [("class", "quantile"), ("d", "M\(n(markX)) \(n(G.plotBottom + 18))l-4 7h8z")],
                tooltip: "\(name) \(duration(ms: valueNanos / 1e6))")
        }
        if let budgetNanos {
            let budgetX = axis.x(budgetNanos)
            let anchor = budgetX > (G.plotLeft + G.plotRight) / 2 ? "end" : "start"
            page.raw(
                "<line class=\"budget\" x1=\"\(n(budgetX))\" x2=\"\(n(budgetX))\" y1=\"\(n(G.plotTop - 8))\" "
                    + "y2=\"\(n(G.plotBottom))\"/><text class=\"budget-label\" text-anchor=\"\(anchor)\" "
                    + "x=\"\(n(budgetX + (anchor == "end" ? -4 : 4)))\" y=\"\(n(G.plotTop - 12))\">budget "
                    + "\(HTMLWriter.escape(duration(ms: budgetNanos / 1e6)))</text>")
        }
        page.raw("</svg>")
    }
}
