#!/usr/bin/env bash
# Proves every `perf-report export` format with its own ecosystem's tools, on the demo's report
# and on the export tests' fixture report:
#   chrome      scripts/validate/chrome_trace.py (structure, sorting, nesting, units)
#   otlp        protobuf json_format strict parse into ExportTraceServiceRequest (opentelemetry-proto)
#   prometheus  promtool check metrics (no lint output allowed), then a real node_exporter
#               textfile collector scrape: node_textfile_scrape_error 0 and our series present
#   html        scripts/validate/html.sh (headless Chromium from Debian)
# Tools come from Debian (apt-get download + dpkg-deb -x: no services started) and PyPI, cached
# in $PERF_VALIDATE_TOOLS (default /tmp/perf-validate-tools), so a second run installs nothing.
#
# Usage: scripts/validate-exports.sh    (PERF_REPORT=/path/to/perf-report to test that binary)
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s%N)
tools=${PERF_VALIDATE_TOOLS:-/tmp/perf-validate-tools}
work=$(mktemp -d /tmp/perf-validate-exports.XXXXXX)
exporter_pid=""
cleanup() {
    if [ -n "$exporter_pid" ]; then kill "$exporter_pid" 2>/dev/null || true; wait "$exporter_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

fail() { echo "FAIL $1: $2" >&2; exit 1; }
pass() { echo "PASS $1: $2"; }

# --- the binary: $PERF_REPORT, else the newer of the built ones, else build it.
binary=${PERF_REPORT:-}
if [ -z "$binary" ]; then
    for candidate in .build/release/perf-report .build/debug/perf-report; do
        if [ -x "$candidate" ] && { [ -z "$binary" ] || [ "$candidate" -nt "$binary" ]; }; then binary=$candidate; fi
    done
fi
if [ -z "$binary" ]; then
    echo "== building perf-report"
    swift build --product perf-report >/dev/null
    binary=.build/debug/perf-report
fi
[ -x "$binary" ] || fail setup "no perf-report binary at '$binary'"

# --- tools, installed once.
if ! python3 -c "import google.protobuf, opentelemetry.proto.collector.trace.v1.trace_service_pb2" 2>/dev/null; then
    echo "== pip install opentelemetry-proto protobuf"
    python3 -m pip install --quiet --disable-pip-version-check opentelemetry-proto protobuf \
        || fail otlp "cannot install opentelemetry-proto and protobuf from PyPI"
fi
promtool=$tools/root/usr/bin/promtool
node_exporter=$tools/root/usr/bin/prometheus-node-exporter
if [ ! -x "$promtool" ] || [ ! -x "$node_exporter" ]; then
    echo "== apt-get download prometheus prometheus-node-exporter (unpacked into $tools, not installed)"
    mkdir -p "$tools/debs" "$tools/root"
    (cd "$tools/debs" && { apt-get download prometheus prometheus-node-exporter >/dev/null 2>&1 \
        || { apt-get update >/dev/null && apt-get download prometheus prometheus-node-exporter >/dev/null 2>&1; }; }) \
        || fail prometheus "cannot download the Debian packages prometheus and prometheus-node-exporter"
    for deb in "$tools"/debs/*.deb; do dpkg-deb -x "$deb" "$tools/root"; done
fi

# --- the demo's report, and the export tests' fixture (two sessions, a crash, overlapping spans,
# hostile names), each exported in every format.
"$binary" demo -o "$work/demo.json" >"$work/demo.out" 2>"$work/demo.err" \
    || fail setup "perf-report demo failed: $(tail -3 "$work/demo.err")"
cp Tests/Fixtures/export/report.json "$work/fixture.json"
reports=(demo fixture)
export_format() {  # report format output
    "$binary" export "$work/$1.json" --format "$2" -o "$3" >/dev/null 2>"$work/$2.err" \
        || fail "$2" "perf-report export of the $1 report exited $?: $(cat "$work/$2.err")"
    [ -s "$3" ] || fail "$2" "perf-report export of the $1 report wrote an empty file"
}

# chrome
for report in "${reports[@]}"; do
    export_format "$report" chrome "$work/$report.trace.json"
    summary=$(python3 scripts/validate/chrome_trace.py "$work/$report.trace.json" 2>&1) || fail chrome "$summary"
    pass chrome "$report report: $summary"
done

# otlp
for report in "${reports[@]}"; do
    export_format "$report" otlp "$work/$report.otlp.json"
    summary=$(python3 scripts/validate/otlp.py "$work/$report.otlp.json" 2>&1) || fail otlp "$summary"
    pass otlp "$report report: $summary"
done

# prometheus: promtool on each file, then one real textfile collector scrape of both (two apps'
# files side by side must not collide).
mkdir -p "$work/textfile"
for report in "${reports[@]}"; do
    export_format "$report" prometheus "$work/textfile/$report.prom"
    lint=$("$promtool" check metrics <"$work/textfile/$report.prom" 2>&1) \
        || fail prometheus "promtool check metrics ($report report): $lint"
    [ -z "$lint" ] || fail prometheus "promtool check metrics lint ($report report): $lint"
done
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$node_exporter" --collector.disable-defaults --collector.textfile \
    --collector.textfile.directory="$work/textfile" --web.listen-address="127.0.0.1:$port" \
    >"$work/node-exporter.log" 2>&1 &
exporter_pid=$!
scrape=$(python3 - "$port" <<'EOF'
import sys, time, urllib.request
url = f"http://127.0.0.1:{sys.argv[1]}/metrics"
deadline = time.monotonic() + 15
while True:  # until the exporter listens, bounded
    try:
        print(urllib.request.urlopen(url, timeout=5).read().decode())
        break
    except OSError as error:
        if time.monotonic() > deadline:
            sys.exit(f"no answer from {url}: {error}")
        time.sleep(0.1)
EOF
) || fail prometheus "node_exporter did not serve /metrics: $scrape $(tail -3 "$work/node-exporter.log")"
grep -qx 'node_textfile_scrape_error 0' <<<"$scrape" \
    || fail prometheus "node_exporter's textfile collector rejected a file: $(grep -E 'textfile|level=error' "$work/node-exporter.log" | tail -3)"
grep -q '^perf_span_duration_seconds_bucket{app="perf-demo"' <<<"$scrape" \
    || fail prometheus "node_exporter does not serve the demo's perf_span_duration_seconds_bucket"
grep -q '^perf_hangs_total{app="my\\"service"} 1$' <<<"$scrape" \
    || fail prometheus "node_exporter does not serve the fixture's perf_hangs_total with its escaped app label"
series=$(grep -c '^perf_' <<<"$scrape")
kill "$exporter_pid"
wait "$exporter_pid" 2>/dev/null || true
exporter_pid=""
pass prometheus "promtool clean on both; node_exporter textfile scrape_error 0, $series perf_ series served"

# html: headless Chromium renders each page (not blank, no console message, no load, valid
# HTML5); its self-test first proves the checks catch a broken page.
summary=$(scripts/validate/html.sh --self-test 2>&1) || fail html "the validator's self-test: $summary"
for report in "${reports[@]}"; do
    export_format "$report" html "$work/$report.html"
    summary=$(scripts/validate/html.sh "$work/$report.html" 2>&1) || fail html "$summary"
    pass html "$report report: $summary"
done

elapsed=$(( ($(date +%s%N) - started) / 1000000 ))
echo "validate-exports: every format passed in $((elapsed / 1000)).$(printf '%03d' $((elapsed % 1000))) s"
