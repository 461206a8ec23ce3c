#!/usr/bin/env bash
# Proves every `perf-report export` format with its own ecosystem's tools, on the demo's report
# and on the export tests' fixture report:
#   chrome      scripts/validate/chrome_trace.py (structure, sorting, nesting, units)
#   otlp        protobuf json_format strict parse into ExportTraceServiceRequest (opentelemetry-proto)
#   prometheus  promtool check metrics (no lint output allowed), then a real node_exporter
#               textfile collector scrape: node_textfile_scrape_error 0 and our series present
#   html        scripts/validate/html.sh (headless Chromium from Debian)
# and the verdict `perf-report check --format junit` prints, for a passing, a breached and an
# incomplete set of budgets on the demo's report:
#   junit       xmllint --schema scripts/validate/junit-10.xsd (Jenkins' JUnit schema, vendored;
#               first proven to reject `skipped` on <testsuites>), then scripts/validate/junit.py:
#               junitparser's counts match the verdict file's checks
# Tools come from Debian (prometheus and node_exporter: apt-get download + dpkg-deb -x into
# $PERF_VALIDATE_TOOLS, default .build/validate-tools, no services started; chromium and
# libxml2-utils: apt-get install) and PyPI (into the virtual environment .build/validate-venv:
# scripts/validate/venv.sh), so a second run installs nothing.
#
# A validator whose tools cannot be had (no network, no apt, Chromium cannot start…) prints
# "SKIPPED <format>: <reason>", never PASS; the run still exits 0 unless --strict is given, so
# only a real defect in an export fails it. Exit 1 on any FAIL (or, with --strict, any SKIPPED).
#
# Usage: scripts/validate-exports.sh [--strict]   (PERF_REPORT=/path/to/perf-report to test that binary)
set -euo pipefail
cd "$(dirname "$0")/.."
strict=0
case "${1:-}" in
    --strict) strict=1 ;;
    "") ;;
    *) echo "usage: scripts/validate-exports.sh [--strict]" >&2; exit 2 ;;
esac
started=$(date +%s%N)
tools=${PERF_VALIDATE_TOOLS:-$PWD/.build/validate-tools}
work=$(mktemp -d /tmp/perf-validate-exports.XXXXXX)
exporter_pid=""
cleanup() {
    if [ -n "$exporter_pid" ]; then kill "$exporter_pid" 2>/dev/null || true; wait "$exporter_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
# shellcheck source=scripts/validate/venv.sh
source scripts/validate/venv.sh
# shellcheck source=scripts/validate/debian.sh
source scripts/validate/debian.sh

# --- the binary: $PERF_REPORT, else the newer of the built ones, else a debug build.
binary=${PERF_REPORT:-$(newest_binary perf-report)} || die setup "cannot build perf-report"
[ -x "$binary" ] || die setup "no perf-report binary at '$binary'"

# --- tools, installed once; what cannot be had is remembered as the reason to skip.
otlp_unavailable=""
validate_venv_require google.protobuf,opentelemetry.proto.collector.trace.v1.trace_service_pb2 \
    opentelemetry-proto protobuf || otlp_unavailable=$validate_reason
otlp_python=$validate_python
# The Chrome trace check and the scrape need only the standard library.
stdlib_python=""
if command -v python3 >/dev/null 2>&1; then stdlib_python=python3; fi
promtool=$tools/root/usr/bin/promtool
node_exporter=$tools/root/usr/bin/prometheus-node-exporter
prometheus_unavailable=""
if [ ! -x "$promtool" ] || [ ! -x "$node_exporter" ]; then
    echo "== apt-get download prometheus prometheus-node-exporter (unpacked into ${tools#"$PWD"/}, not installed)"
    if ! validate_debian_unpack "$tools" prometheus prometheus-node-exporter; then
        prometheus_unavailable=$validate_reason
    elif [ ! -x "$promtool" ] || [ ! -x "$node_exporter" ]; then
        prometheus_unavailable="the Debian packages hold no usr/bin/promtool and prometheus-node-exporter"
    fi
fi

# xmllint (Debian's libxml2-utils) for the JUnit schema, junitparser (PyPI) for its counts.
junit_unavailable=""
if ! command -v xmllint >/dev/null 2>&1; then
    echo "== apt-get install libxml2-utils (xmllint)"
    if ! validate_can_apt; then
        junit_unavailable="xmllint is not installed and apt-get is not available to root to install libxml2-utils"
    elif ! validate_apt_install libxml2-utils || ! command -v xmllint >/dev/null 2>&1; then
        junit_unavailable="xmllint is not installed and apt-get cannot install libxml2-utils"
    fi
fi
junitparser_unavailable=""
validate_venv_require junitparser junitparser || junitparser_unavailable=$validate_reason
junit_python=$validate_python

# --- the demo's report, and the export tests' fixture (two sessions, a crash, overlapping spans,
# hostile names), each exported in every format.
"$binary" demo -o "$work/demo.json" >"$work/demo.out" 2>"$work/demo.err" \
    || die setup "perf-report demo failed: $(tail -3 "$work/demo.err")"
cp Tests/Fixtures/export/report.json "$work/fixture.json"
reports=(demo fixture)
export_format() {  # report format output
    "$binary" export "$work/$1.json" --format "$2" -o "$3" >/dev/null 2>"$work/$2.err" \
        || die "$2" "perf-report export of the $1 report exited $?: $(cat "$work/$2.err")"
    [ -s "$3" ] || die "$2" "perf-report export of the $1 report wrote an empty file"
}

# chrome: the validator needs nothing beyond the standard library.
for report in "${reports[@]}"; do
    export_format "$report" chrome "$work/$report.trace.json"
    if [ -z "$stdlib_python" ]; then
        skip chrome "$report report: no python3 to run scripts/validate/chrome_trace.py"
        continue
    fi
    summary=$("$stdlib_python" scripts/validate/chrome_trace.py "$work/$report.trace.json" 2>&1) || die chrome "$summary"
    pass chrome "$report report: $summary"
done

# otlp
for report in "${reports[@]}"; do
    export_format "$report" otlp "$work/$report.otlp.json"
    if [ -n "$otlp_unavailable" ]; then
        skip otlp "$report report: $otlp_unavailable"
        continue
    fi
    summary=$("$otlp_python" scripts/validate/otlp.py "$work/$report.otlp.json" 2>&1) || die otlp "$summary"
    pass otlp "$report report: $summary"
done

# prometheus: promtool on each file, then one real textfile collector scrape of both (two apps'
# files side by side must not collide).
mkdir -p "$work/textfile"
for report in "${reports[@]}"; do
    export_format "$report" prometheus "$work/textfile/$report.prom"
    [ -z "$prometheus_unavailable" ] || continue
    lint=$("$promtool" check metrics <"$work/textfile/$report.prom" 2>&1) \
        || die prometheus "promtool check metrics ($report report): $lint"
    [ -z "$lint" ] || die prometheus "promtool check metrics lint ($report report): $lint"
done
scrape_textfiles() {
    local port scrape series
    port=$("$stdlib_python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$node_exporter" --collector.disable-defaults --collector.textfile \
        --collector.textfile.directory="$work/textfile" --web.listen-address="127.0.0.1:$port" \
        >"$work/node-exporter.log" 2>&1 &
    exporter_pid=$!
    scrape=$("$stdlib_python" - "$port" <<'EOF'
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
    ) || die prometheus "node_exporter did not serve /metrics: $scrape $(tail -3 "$work/node-exporter.log")"
    grep -qx 'node_textfile_scrape_error 0' <<<"$scrape" \
        || die prometheus "node_exporter's textfile collector rejected a file: $(grep -E 'textfile|level=error' "$work/node-exporter.log" | tail -3)"
    grep -q '^perf_span_duration_seconds_bucket{app="perf-demo"' <<<"$scrape" \
        || die prometheus "node_exporter does not serve the demo's perf_span_duration_seconds_bucket"
    grep -q '^perf_hangs_total{app="my\\"service"} 1$' <<<"$scrape" \
        || die prometheus "node_exporter does not serve the fixture's perf_hangs_total with its escaped app label"
    series=$(grep -c '^perf_' <<<"$scrape")
    kill "$exporter_pid"
    wait "$exporter_pid" 2>/dev/null || true
    exporter_pid=""
    pass prometheus "promtool clean on both; node_exporter textfile scrape_error 0, $series perf_ series served"
}
if [ -n "$prometheus_unavailable" ]; then
    skip prometheus "promtool and the node_exporter scrape: $prometheus_unavailable"
elif [ -z "$stdlib_python" ]; then
    pass prometheus "promtool clean on both"
    skip prometheus "node_exporter scrape: no python3 to find a port and fetch /metrics"
else
    scrape_textfiles
fi

# html: headless Chromium renders each page (not blank, no console message, no load, valid
# HTML5); its self-test first proves the checks catch a broken page. Exit 77 is html.sh's
# "cannot run here" (its SKIPPED line says why).
run_html() {  # arguments of html.sh; sets html_output, returns html.sh's status
    local status=0
    html_output=$(scripts/validate/html.sh "$@" 2>&1) || status=$?
    return $status
}
html_skipped() { sed -n 's/^SKIPPED html: //p' <<<"$html_output" | tail -1; }
status=0
run_html --self-test || status=$?
if [ $status -eq 77 ]; then
    skip html "$(html_skipped)"
elif [ $status -ne 0 ]; then
    die html "the validator's self-test: $html_output"
else
    pass html "self-test: every check catches the page built to break it"
    for report in "${reports[@]}"; do
        export_format "$report" html "$work/$report.html"
        status=0
        run_html "$work/$report.html" || status=$?
        if [ $status -eq 77 ]; then skip html "$report report: $(html_skipped)"; continue; fi
        [ $status -eq 0 ] || die html "$html_output"
        pass html "$report report: $(sed -n 's/^html.sh: \([0-9]*x[0-9]*, \)/\1/p' <<<"$html_output" | tail -1)"
    done
fi

# junit: the verdict of `check --format junit` on the demo's report, for the project's own gate
# (passes), its breached copy (exit 1), and budgets that leave checks skipped (a percentile on too
# few calls, a span absent at level warn) and the data incomplete (a span absent at level error,
# exit 4). --allow-debug: the percentile is a time budget, and the demo may be a debug build.
cat >"$work/incomplete-budgets.json" <<'JSON'
{"version": 1,
 "spans": [{"match": "demo.fetchPage", "limits": {"p99": {"max": "60s"}}},
           {"match": "demo.optional-span", "onMissing": "warn"},
           {"match": "demo.required-span", "onMissing": "error"}]}
JSON
junit_cases=("pass scripts/perf-budgets.json 0" "breached scripts/perf-budgets-breached.json 1"
    "incomplete $work/incomplete-budgets.json 4")
for junit_case in "${junit_cases[@]}"; do
    read -r name budgets want <<<"$junit_case"
    status=0
    "$binary" check "$work/demo.json" --budgets "$budgets" --allow-debug --format junit \
        -o "$work/$name.verdict.json" >"$work/$name.junit.xml" 2>"$work/$name.junit.err" || status=$?
    [ $status -eq "$want" ] \
        || die junit "check against ${budgets#"$work"/} exited $status, not $want: $(tail -3 "$work/$name.junit.err")"
    [ -s "$work/$name.junit.xml" ] || die junit "check against ${budgets#"$work"/} printed no JUnit XML"
done
if [ -n "$junit_unavailable" ]; then
    skip junit "schema: $junit_unavailable"
else
    # The schema must bite: the attribute the writer once put on the root is refused, the same
    # document without it accepted.
    printf '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites tests="1"%s><testsuite name="s" tests="1" skipped="0"><testcase name="c"/></testsuite></testsuites>\n' \
        ' skipped="0"' >"$work/schema-bad.xml"
    printf '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites tests="1"%s><testsuite name="s" tests="1" skipped="0"><testcase name="c"/></testsuite></testsuites>\n' \
        '' >"$work/schema-good.xml"
    if xmllint --noout --schema scripts/validate/junit-10.xsd "$work/schema-bad.xml" >/dev/null 2>&1; then
        die junit "scripts/validate/junit-10.xsd accepts skipped on <testsuites>: the schema does not bite"
    fi
    lint=$(xmllint --noout --schema scripts/validate/junit-10.xsd "$work/schema-good.xml" 2>&1) \
        || die junit "scripts/validate/junit-10.xsd rejects a minimal valid document: $lint"
    for junit_case in "${junit_cases[@]}"; do
        read -r name _ _ <<<"$junit_case"
        lint=$(xmllint --noout --schema scripts/validate/junit-10.xsd "$work/$name.junit.xml" 2>&1) \
            || die junit "the $name verdict's JUnit XML is not valid against junit-10.xsd: $lint"
    done
    pass junit "xmllint: pass, breached and incomplete verdicts valid against Jenkins' junit-10.xsd (which rejects skipped on <testsuites>)"
fi
for junit_case in "${junit_cases[@]}"; do
    read -r name _ _ <<<"$junit_case"
    if [ -n "$junitparser_unavailable" ]; then
        skip junit "$name verdict counts: $junitparser_unavailable"
        continue
    fi
    summary=$("$junit_python" scripts/validate/junit.py "$work/$name.junit.xml" "$work/$name.verdict.json" 2>&1) \
        || die junit "$summary"
    pass junit "$name verdict: junitparser reads $summary"
done

elapsed=$(( ($(date +%s%N) - started) / 1000000 ))
mode=""
[ $strict -eq 1 ] && mode=--strict
checks_exit "validate-exports ($((elapsed / 1000)).$(printf '%03d' $((elapsed % 1000))) s)" $mode
