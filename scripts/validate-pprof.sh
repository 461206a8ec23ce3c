#!/usr/bin/env bash
# Proves `perf-report export --format pprof` with Go's own pprof: builds a report from a ledger of
# profiled span lines (Tests/Fixtures/profile/data: two api.get lines, 70 samples), exports it, and
# runs `go tool pprof -top` and `-traces` on the file. The profile must open (gzip, protobuf and
# pprof's own checks), name the frames the ledger named, count 70 samples (700 ms of wall time at
# 10 ms a sample), and carry the span and span_id labels. Then the same on `perf-report demo`'s
# report, whose profiles the real sampler took: pprof must read it and name Perf.measure's frame
# (SKIPPED when the run happened to profile no span).
#
# Go comes from Debian (`apt-get install -y golang-go`) when it is missing and this runs as root;
# otherwise the checks print "SKIPPED pprof: <reason>", never PASS, and the run exits 0 (1 with
# --strict). Exit 1 on any FAIL.
#
# Usage: scripts/validate-pprof.sh [--strict]   (PERF_REPORT=/path/to/perf-report to test that binary)
set -euo pipefail
cd "$(dirname "$0")/.."
strict=""
case "${1:-}" in
    --strict) strict=--strict ;;
    "") ;;
    *) echo "usage: scripts/validate-pprof.sh [--strict]" >&2; exit 2 ;;
esac
work=$(mktemp -d /tmp/perf-validate-pprof.XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

binary=${PERF_REPORT:-$(newest_binary perf-report)} || die setup "cannot build perf-report"
[ -x "$binary" ] || die setup "no perf-report binary at '$binary'"

# --- Go: the system's, else Debian's golang-go (root only: a user's machine is not changed).
go_unavailable=""
if ! command -v go >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ]; then
        go_unavailable="go is not installed and installing golang-go needs root"
    elif ! command -v apt-get >/dev/null 2>&1; then
        go_unavailable="go is not installed and there is no apt-get to install golang-go"
    elif ! { apt-get update >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y golang-go >/dev/null 2>&1; }; then
        go_unavailable="apt-get install golang-go failed (no network or no such package here)"
    elif ! command -v go >/dev/null 2>&1; then
        go_unavailable="golang-go is installed but no go is on PATH"
    fi
fi

# --- the export: a report built from the fixture ledger, then pprof.
"$binary" build --dir Tests/Fixtures/profile/data -o "$work/report.json" >"$work/build.log" 2>&1 \
    || die build "perf-report build failed: $(cat "$work/build.log")"
"$binary" export "$work/report.json" --format pprof -o "$work/spans.pb.gz" >"$work/export.log" 2>&1 \
    || die export "perf-report export --format pprof failed: $(cat "$work/export.log")"
[ "$(head -c 2 "$work/spans.pb.gz" | od -An -tx1 | tr -d ' ')" = "1f8b" ] || die export "the file is not gzip"
if command -v gzip >/dev/null 2>&1; then
    if gzip -t "$work/spans.pb.gz" 2>"$work/gzip.log"; then
        pass gzip "gzip -t: the member's stored blocks, CRC-32 and length check out"
    else
        fail gzip "gzip -t rejects the file: $(cat "$work/gzip.log")"
    fi
fi

if [ -n "$go_unavailable" ]; then
    skip pprof "$go_unavailable"
else
    export HOME=${HOME:-$work} GOTOOLCHAIN=local PPROF_TMPDIR=$work
    if ! go tool pprof -top "$work/spans.pb.gz" >"$work/top.txt" 2>"$work/top.err"; then
        fail pprof "go tool pprof -top cannot read the file: $(cat "$work/top.err")"
    else
        cat "$work/top.txt"
        missing=""
        for frame in '__read' 'App.Store.load(id:)' 'App.parse(_:)' 'App.handle(_:)' 'swift_job_run' 'other'; do
            grep -qF -- "$frame" "$work/top.txt" || missing="$missing $frame"
        done
        if [ -n "$missing" ]; then
            fail pprof "go tool pprof -top does not name:$missing"
        elif ! grep -qE 'of 70 total' "$work/top.txt"; then
            fail pprof "go tool pprof -top does not count the fixture's 70 samples"
        else
            pass pprof "go tool pprof -top names every frame of the ledger's stacks, 70 samples in all"
        fi
        go tool pprof -sample_index=wall -top "$work/spans.pb.gz" >"$work/wall.txt" 2>/dev/null || true
        if grep -qE 'of 700ms total' "$work/wall.txt"; then
            pass pprof-wall "wall/nanoseconds: 700 ms, 70 samples at 10 ms"
        else
            fail pprof-wall "expected 700ms of wall time: $(head -5 "$work/wall.txt")"
        fi
        go tool pprof -traces "$work/spans.pb.gz" >"$work/traces.txt" 2>/dev/null || true
        if grep -qE '^ +span: +api\.get$' "$work/traces.txt" \
            && grep -qE '^ +span_id: +s-profile/scope 7$' "$work/traces.txt" \
            && grep -qF 'wait:  read(fd 7' "$work/traces.txt"; then
            pass pprof-labels "go tool pprof -traces shows the span, span_id and wait labels"
        else
            fail pprof-labels "the span, span_id or wait label is missing from go tool pprof -traces: $(head -12 "$work/traces.txt")"
        fi
    fi
fi

# --- a real sampler's profiles: the demo's.
if "$binary" demo --dir "$work/demo-data" -o "$work/demo.json" >"$work/demo.out" 2>"$work/demo.err"; then
    status=0
    "$binary" export "$work/demo.json" --format pprof -o "$work/demo.pb.gz" >"$work/demo-export.log" 2>&1 || status=$?
    if [ "$status" -eq 4 ]; then
        skip pprof-demo "the demo's run profiled no span: $(cat "$work/demo-export.log")"
    elif [ "$status" -ne 0 ]; then
        fail pprof-demo "perf-report export --format pprof of the demo's report failed: $(cat "$work/demo-export.log")"
    elif [ -n "$go_unavailable" ]; then
        skip pprof-demo "$go_unavailable"
    elif ! go tool pprof -top "$work/demo.pb.gz" >"$work/demo-top.txt" 2>"$work/demo-top.err"; then
        fail pprof-demo "go tool pprof -top cannot read the demo's profile: $(cat "$work/demo-top.err")"
    elif grep -qF 'Perf.Perf.measure(' "$work/demo-top.txt"; then
        pass pprof-demo "go tool pprof -top reads the demo's profile: $(grep -m1 'Total samples' "$work/demo-top.txt" | sed 's/.*Total/total/')"
    else
        fail pprof-demo "the demo's profile does not name Perf.measure's frame: $(head -12 "$work/demo-top.txt")"
    fi
else
    fail pprof-demo "perf-report demo failed: $(tail -3 "$work/demo.err")"
fi
checks_exit validate-pprof $strict
