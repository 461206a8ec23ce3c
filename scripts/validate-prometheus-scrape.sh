#!/usr/bin/env bash
# A real Prometheus scrapes Perf.MetricsEndpoint: `perf-test-child metrics-endpoint`
# ends 1,000 spans of known durations, serves them on 127.0.0.1:<ephemeral port> and prints its
# own p95; Prometheus (Debian's package, unpacked with scripts/validate/debian.sh into
# $PERF_VALIDATE_TOOLS, default .build/validate-tools, as scripts/validate-exports.sh does)
# scrapes it every second. Checks:
#   up          up{job="perf-endpoint"} == 1
#   promtool    `promtool check metrics` on the served body prints nothing
#   head        HEAD /metrics: 200, no body; /other: 404
#   p95         histogram_quantile(0.95, sum by (le) (perf_span_duration_seconds_bucket{span=…}))
#               within one bucket's width (the export's `le` bounds) of Perf's own p95
#   counters    two bodies a scrape apart: no counter, bucket or count went down, the ticking
#               span's count went up; and Prometheus saw no reset (resets(…[5m]) == 0)
# Prints PASS/FAIL lines; SKIPPED (never PASS) with the reason when Prometheus cannot be had here,
# exit 0 then; exit 1 on a real failure. Everything it starts is killed on exit.
#
# Usage: scripts/validate-prometheus-scrape.sh   (PERF_TEST_CHILD=/path/to/perf-test-child to test that binary)
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s%N)
tools=${PERF_VALIDATE_TOOLS:-$PWD/.build/validate-tools}
work=$(mktemp -d /tmp/perf-validate-scrape.XXXXXX)
child_pid=""
prometheus_pid=""
cleanup() {
    for pid in "$prometheus_pid" "$child_pid"; do
        if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    done
    exec 3>&- 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
# shellcheck source=scripts/validate/debian.sh
source scripts/validate/debian.sh

# Without Prometheus nothing here can be checked: one SKIPPED line, exit 0.
skip_all() { skip scrape "$1"; exit 0; }
took() { local ms=$(( ($(date +%s%N) - started) / 1000000 )); echo "$((ms / 1000)).$(printf '%03d' $((ms % 1000))) s"; }

# --- the child: $PERF_TEST_CHILD, else the newer of the built ones, else a debug build.
child=${PERF_TEST_CHILD:-$(newest_binary perf-test-child)} || die "scrape setup" "cannot build perf-test-child"
[ -x "$child" ] || die "scrape setup" "no perf-test-child binary at '$child'"

# --- the tools: Prometheus and promtool from Debian, curl and python3 from the machine.
prometheus=$tools/root/usr/bin/prometheus
promtool=$tools/root/usr/bin/promtool
if [ ! -x "$prometheus" ] || [ ! -x "$promtool" ]; then
    echo "== apt-get download prometheus (unpacked into ${tools#"$PWD"/}, not installed)"
    validate_debian_unpack "$tools" prometheus || skip_all "$validate_reason"
    [ -x "$prometheus" ] && [ -x "$promtool" ] || skip_all "the Debian package holds no usr/bin/prometheus and promtool"
fi
command -v curl >/dev/null 2>&1 || skip_all "no curl to fetch /metrics and query Prometheus"
command -v python3 >/dev/null 2>&1 || skip_all "no python3 to read Prometheus' JSON answers"

# --- start the child; its stdin is a FIFO held open on fd 3 until exit.
mkfifo "$work/stdin"
"$child" metrics-endpoint "$work/data" <"$work/stdin" >"$work/child.out" 2>"$work/child.err" &
child_pid=$!
exec 3>"$work/stdin"
for _ in $(seq 300); do grep -q '^ready$' "$work/child.out" 2>/dev/null && break; sleep 0.1; done
grep -q '^ready$' "$work/child.out" || die "scrape setup" "the child did not get ready: $(tail -3 "$work/child.err")"
port=$(sed -n 's/^port //p' "$work/child.out")
p95=$(sed -n 's/^p95 //p' "$work/child.out")
bounds=$(sed -n 's/^bounds //p' "$work/child.out")
span=metrics.request
echo "== child pid $child_pid serves 127.0.0.1:$port; Perf's own p95 of $span: $p95 s"

# --- Prometheus on a free loopback port, scraping the child every second.
prometheus_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: perf-endpoint
    static_configs:
      - targets: ["127.0.0.1:$port"]
EOF
"$prometheus" --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
    --web.listen-address="127.0.0.1:$prometheus_port" --log.level=warn >"$work/prometheus.log" 2>&1 &
prometheus_pid=$!
query() {  # PromQL → the first result's value, or nothing
    curl -sfG "http://127.0.0.1:$prometheus_port/api/v1/query" --data-urlencode "query=$1" 2>/dev/null \
        | python3 -c 'import json, sys
result = json.load(sys.stdin)["data"]["result"]
print(result[0]["value"][1] if result else "")' 2>/dev/null || true
}
up=""
for _ in $(seq 300); do
    up=$(query 'up{job="perf-endpoint"}')
    [ "$up" = "1" ] && break
    kill -0 "$prometheus_pid" 2>/dev/null || die "scrape up" "prometheus exited: $(tail -3 "$work/prometheus.log")"
    sleep 0.1
done
[ "$up" = "1" ] || die "scrape up" "up{job=\"perf-endpoint\"} is '${up:-absent}' after 30 s: $(tail -3 "$work/prometheus.log")"
pass "scrape up" "Prometheus $("$prometheus" --version 2>&1 | sed -n '1s/^prometheus, version \([^ ]*\).*/\1/p') scrapes 127.0.0.1:$port: up == 1"

# --- the body through promtool, HEAD and 404.
curl -sf "http://127.0.0.1:$port/metrics" -o "$work/body1" || die "scrape promtool" "GET /metrics failed"
lint=$("$promtool" check metrics <"$work/body1" 2>&1) || die "scrape promtool" "promtool check metrics: $lint"
[ -z "$lint" ] || die "scrape promtool" "promtool check metrics lint: $lint"
pass "scrape promtool" "promtool check metrics clean on the served body ($(grep -c '^perf_' "$work/body1") samples)"
head=$(curl -sI "http://127.0.0.1:$port/metrics" | tr -d '\r')
grep -q '^HTTP/1.1 200' <<<"$head" || die "scrape head" "HEAD /metrics: $(head -1 <<<"$head")"
grep -qi '^content-type: text/plain; version=0.0.4' <<<"$head" || die "scrape head" "HEAD /metrics has no 0.0.4 content type"
status=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/other")
[ "$status" = "404" ] || die "scrape head" "GET /other answered $status, not 404"
pass "scrape head" "HEAD /metrics 200 with the 0.0.4 content type; GET /other 404"

# --- p95 from Prometheus' buckets against Perf's own, within the width of p95's bucket.
promql="histogram_quantile(0.95, sum by (le) (perf_span_duration_seconds_bucket{span=\"$span\"}))"
quantile=$(query "$promql")
[ -n "$quantile" ] || die "scrape p95" "no answer to $promql"
verdict=$(python3 - "$p95" "$quantile" "$bounds" <<'EOF'
import sys
own, scraped = float(sys.argv[1]), float(sys.argv[2])
bounds = [float(b) for b in sys.argv[3].split(",")]
upper = next(b for b in bounds if b >= own)
lower = max([0.0] + [b for b in bounds if b < upper])
width = upper - lower
ok = abs(scraped - own) <= width
print(("ok " if ok else "bad ") + f"Prometheus {scraped:.6f} s, Perf {own:.6f} s, |difference| {abs(scraped - own):.6f} s, "
      f"bucket ({lower:g}, {upper:g}] width {width:g} s")
EOF
)
case $verdict in
    ok\ *) pass "scrape p95" "$promql: ${verdict#ok }" ;;
    *) die "scrape p95" "$promql: ${verdict#bad }" ;;
esac

# --- counters across scrapes: nothing goes down, the ticking span goes up, Prometheus saw no reset.
before=$(query 'perf_span_duration_seconds_count{span="metrics.tick"}')
for _ in $(seq 50); do
    after=$(query 'perf_span_duration_seconds_count{span="metrics.tick"}')
    [ -n "$before" ] && [ -n "$after" ] && python3 -c "import sys; sys.exit(0 if float('$after') > float('$before') else 1)" && break
    sleep 0.1
done
curl -sf "http://127.0.0.1:$port/metrics" -o "$work/body2" || die "scrape counters" "the second GET /metrics failed"
went_down=$(python3 - "$work/body1" "$work/body2" <<'EOF'
import sys
def samples(path):
    values = {}
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        series, value = line.rsplit(" ", 1)
        if "_bucket{" in series or series.split("{")[0].endswith(("_total", "_count", "_sum")):
            values[series] = float(value)
    return values
first, second = samples(sys.argv[1]), samples(sys.argv[2])
down = [f"{s}: {first[s]} -> {second.get(s)}" for s in first if second.get(s, -1) < first[s]]
ticks = [s for s in second if s.startswith("perf_span_duration_seconds_count{") and 'span="metrics.tick"' in s]
tick = ticks[0] if ticks else 'perf_span_duration_seconds_count{span="metrics.tick"}'
if second.get(tick, 0) <= first.get(tick, 0):
    down.append(f"{tick} did not grow: {first.get(tick)} -> {second.get(tick)}")
print("; ".join(down) if down else f"{len(first)} counter samples")
EOF
)
case $went_down in
    *" counter samples") ;;
    *) die "scrape counters" "$went_down" ;;
esac
resets=$(query 'sum(resets(perf_span_duration_seconds_count[5m])) + sum(resets(perf_span_duration_seconds_bucket[5m]))')
[ "$resets" = "0" ] || die "scrape counters" "Prometheus saw counter resets: '${resets:-no answer}'"
pass "scrape counters" "two bodies a scrape apart: none of $went_down went down, metrics.tick's count $before -> $after in Prometheus, resets() 0"

echo "validate-prometheus-scrape: every check passed in $(took)"
