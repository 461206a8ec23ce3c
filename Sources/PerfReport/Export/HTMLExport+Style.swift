// The html export's inline stylesheet: system fonts only (nothing to fetch), one palette shared
// by the timeline, the charts and the tables so a colour means the same thing everywhere.
import Perf

extension HTMLExport {
    /// The page's CSS; the span colours match the timeline legend.
    static let style = """
        :root{--ink:#1f2933;--muted:#667085;--line:#e4e7ec;--bg:#ffffff;--panel:#f8fafc;\
        --span:#4c7bd9;--over:#f0a020;--fail:#9b59d0;--hang:#d92d20;--hitch:#f97066;--note:#0e9384}
        *{box-sizing:border-box}
        body{margin:0;background:var(--bg);color:var(--ink);\
        font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
        main{max-width:1360px;margin:0 auto;padding:24px 20px 40px}
        header h1{margin:0;font-size:26px}
        .version{color:var(--muted);font-weight:400;font-size:18px}
        .subtitle,.host{margin:2px 0;color:var(--muted)}
        h2{font-size:18px;margin:28px 0 10px;padding-bottom:4px;border-bottom:2px solid var(--line)}
        .stats{display:flex;flex-wrap:wrap;gap:10px;margin:16px 0 4px}
        .stat{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:8px 14px;min-width:120px}
        .stat b{display:block;font-size:22px}
        .stat span{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
        .stat.alarm{border-color:#fda29b;background:#fef3f2}
        .stat.alarm b{color:var(--hang)}
        table{border-collapse:collapse;width:100%;font-size:13px}
        th{text-align:left;color:var(--muted);font-weight:600;border-bottom:1px solid var(--line);padding:5px 8px}
        td{padding:4px 8px;border-bottom:1px solid var(--line);vertical-align:top;word-break:break-word}
        tbody tr:nth-child(even){background:var(--panel)}
        td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
        .badge{display:inline-block;border-radius:10px;padding:0 9px;font-size:12px;font-weight:600;color:#fff}
        .badge.status-active{background:var(--span)}
        .badge.status-terminated{background:#12b76a}
        .badge.status-crashed{background:var(--hang)}
        .badge.status-unknown{background:var(--muted)}
        .kind{font-weight:600;white-space:nowrap}
        td.nowrap{white-space:nowrap}
        .kind-hang{color:var(--hang)}
        .kind-hitch{color:#b42318}
        .over-count{color:#b54708;font-weight:600}
        .notice{background:#fffaeb;border:1px solid #fedf89;border-radius:8px;padding:10px 14px}
        .notice.small{font-size:12px;margin:8px 0}
        .caption{color:var(--muted);font-size:12px;margin:6px 0}
        .left-out{color:#b54708}
        .legend{display:flex;gap:16px;font-size:12px;color:var(--muted);margin-bottom:6px}
        .swatch{display:inline-block;width:12px;height:10px;border-radius:2px;margin-right:5px;vertical-align:-1px}
        .swatch.span{background:var(--span)}
        .swatch.over{background:var(--over)}
        .swatch.fail{background:var(--fail)}
        .swatch.hang{background:var(--hang)}
        .swatch.hitch{background:var(--hitch)}
        .swatch.note{background:var(--note);width:3px}
        .scroll{overflow-x:auto;border:1px solid var(--line);border-radius:8px;padding:8px}
        svg text{font-size:11px;fill:var(--ink)}
        svg .muted{fill:var(--muted)}
        svg .tick{fill:var(--muted);text-anchor:middle;font-size:10px}
        svg .block-title{font-size:13px;font-weight:600}
        svg .status-crashed{fill:var(--hang)}
        svg .status-terminated{fill:#039855}
        svg .status-active{fill:var(--span)}
        svg .lane-label{font-size:11px}
        svg .lane{fill:#fff}
        svg .lane.odd{fill:var(--panel)}
        svg .grid{stroke:var(--line);stroke-width:1}
        svg .span{fill:var(--span)}
        svg .span.over{fill:var(--over)}
        svg .span.fail{fill:var(--fail)}
        svg .hang rect{fill:var(--hang)}
        svg .hitch rect{fill:var(--hitch)}
        svg .wash{fill-opacity:.16}
        svg .hang-label{fill:var(--hang);font-weight:700;font-size:10px;paint-order:stroke;stroke:#fff;\
        stroke-width:3px;stroke-linejoin:round}
        svg .note line{stroke:var(--note);stroke-dasharray:3 3}
        svg .note path{fill:var(--note)}
        .cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(410px,1fr));gap:12px;margin-bottom:12px}
        figure.hist{margin:0;background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:8px 10px}
        figure.hist figcaption{display:flex;justify-content:space-between;gap:8px;font-size:13px}
        figure.hist figcaption span{color:var(--muted);font-size:12px}
        figure.hist svg{display:block;width:100%;height:auto}
        svg .bar{fill:var(--span)}
        svg .axis{stroke:#98a2b3}
        svg .budget{stroke:var(--hang);stroke-width:1.5;stroke-dasharray:4 3}
        svg .budget-label{fill:var(--hang);font-weight:600}
        svg .quantile{fill:var(--ink)}
        .quantiles{margin:4px 0 0;font-size:12px;font-variant-numeric:tabular-nums}
        footer{margin-top:32px;color:var(--muted);font-size:12px}
        """
}
