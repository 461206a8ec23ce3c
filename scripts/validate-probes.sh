#!/usr/bin/env bash
# Proves Perf's USDT probes (provider perf, CPerfProbes.h) with the system's own tools, on a
# release build of perf-test-child (a program that links Perf statically):
#   readelf   readelf -n lists every probe (span_end, span_begin, hang, hitch, note,
#             session_start, session_end) with its argument string (8-byte registers)
#   gdb       gdb -batch -ex 'info probes stap' lists every probe
#   record    perf record of `perf-test-child probes` (uprobes): names, counts and durations
#             within 1 % of what the program did, one hang hit with its culprit; then
#             perf-report attach to a live child that keeps running (ProbeRecordTests, pointed
#             at the release binaries)
#   bpftrace  the LiveProcess article's bpftrace line, as printed there, against a live
#             `perf-test-child probes forever` (20 µs spans): its histogram must name probe.tick
#             and put most spans in the bucket holding 20 µs
# perf comes from Debian's linux-perf and bpftrace from Debian's bpftrace (apt-get install when missing); tracefs is mounted at
# /sys/kernel/tracing when it is not. A check whose tools or kernel support cannot be had (not
# root, no perf, no uprobe events) prints "SKIPPED <check>: <reason>", never PASS. Exit 1 on
# any FAIL.
#
# Usage: scripts/validate-probes.sh [--no-build]
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
build=1
if [ $# -gt 0 ] && is_no_build "$1"; then
    build=0
    shift
fi
[ $# -eq 0 ] || { echo "usage: scripts/validate-probes.sh [--no-build]" >&2; exit 2; }
probes=(span_end span_begin hang hitch note session_start session_end)

[ "$build" -eq 0 ] || release_build perf-test-child perf-report >/dev/null
require_binaries .build/release perf-test-child perf-report
child=.build/release/perf-test-child
report=.build/release/perf-report

# --- readelf -n: every probe, each with its register arguments.
if command -v readelf >/dev/null; then
    notes=$(readelf -n "$child")
    missing=()
    for probe in "${probes[@]}"; do
        grep -q "Name: $probe\$" <<<"$notes" || missing+=("$probe")
    done
    arguments=$(grep -A3 "Provider: perf" <<<"$notes" | grep "Arguments:" | sed "s/.*Arguments: //" | sort -u || true)
    bad=$(grep -vE '^(8@%[a-z0-9]+ ?)+$' <<<"$arguments" || true)
    sites=$(grep -c "Provider: perf" <<<"$notes")
    if [ ${#missing[@]} -eq 0 ] && [ -z "$bad" ]; then
        pass readelf "${#probes[@]} probes at $sites sites in $child, arguments 8-byte registers"
    else
        fail readelf "missing: ${missing[*]:-none}; unexpected arguments: ${bad:-none}"
    fi
else
    skip readelf "readelf (binutils) is not installed"
fi

# --- gdb's view of the same notes.
if command -v gdb >/dev/null; then
    listed=$(gdb -batch -ex 'info probes stap' "$child" 2>/dev/null | awk '$2 == "perf" { print $3 }' | sort -u)
    missing=()
    for probe in "${probes[@]}"; do grep -qx "$probe" <<<"$listed" || missing+=("$probe"); done
    if [ ${#missing[@]} -eq 0 ]; then
        pass gdb "info probes stap lists ${#probes[@]} probes of provider perf"
    else
        fail gdb "info probes stap misses: ${missing[*]}"
    fi
else
    skip gdb "gdb is not installed"
fi

# Prints why COMMAND cannot be used for uprobes here (empty when it can): root, then COMMAND,
# installed from Debian's PACKAGE when missing.
uprobe_tool_missing() {
    local command=$1 package=$2
    if [ "$(id -u)" -ne 0 ]; then
        echo "not root: uprobes need root"
        return
    fi
    if ! command -v "$command" >/dev/null; then
        echo "== $command missing: apt-get install $package" >&2
        (apt-get install -y -qq "$package" >/dev/null 2>&1 \
            || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq "$package" >/dev/null 2>&1; }) || true
    fi
    command -v "$command" >/dev/null || echo "$command cannot be had (apt-get install $package failed)"
}

# --- perf record and perf-report attach: root, perf, tracefs and uprobe events first.
reason=$(uprobe_tool_missing perf linux-perf)
if [ -z "$reason" ] && [ ! -e /sys/kernel/tracing/uprobe_events ]; then
    [ -e /sys/kernel/tracing/README ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
    [ -e /sys/kernel/tracing/uprobe_events ] \
        || reason="no /sys/kernel/tracing/uprobe_events: tracefs cannot be mounted or the kernel has no uprobe events"
fi
if [ -n "$reason" ]; then
    skip record "$reason"
else
    echo "== perf record and perf-report attach (ProbeRecordTests on the release binaries)"
    # The flags of scripts/test.sh: CI has just built the tests with them, and a build with other
    # flags recompiled every module (about two minutes of CI's time).
    swift build --build-tests "${debug_flags[@]}" >/dev/null
    log=$(mktemp /tmp/perf-validate-probes.XXXXXX)
    PERF_PROBES_CHILD="$PWD/$child" PERF_PROBES_REPORT="$PWD/$report" \
        swift test --skip-build --filter ProbeRecordTests >"$log" 2>&1 || true
    grep -E "spans/s|✘|recorded an issue|↳ " "$log" | grep -v "Testing Library\|Target Platform" || true
    if grep -q "Suite ProbeRecordTests passed" "$log" && ! grep -q "skipped" "$log"; then
        pass record "perf record: names, counts, durations within 1 %, one hang with its culprit; attach to a live child"
    elif grep -q "skipped" "$log"; then
        skip record "$(grep -m1 skipped "$log")"
    else
        fail record "see $log"
    fi
fi
# --- bpftrace: the documented one-liner, run as printed in LiveProcess.md.
article=Sources/Perf/Perf.docc/LiveProcess.md
bpf_reason=$(uprobe_tool_missing bpftrace bpftrace)
documented=$(grep -m1 "usdt:/proc/" "$article" || true)
[ -n "$documented" ] || bpf_reason="no bpftrace line in $article"
if [ -n "$bpf_reason" ]; then
    skip bpftrace "$bpf_reason"
else
    # The article's program, with `$(pidof myservice)` (quoted out of the program text there)
    # replaced by the child's pid.
    program=${documented#*-e \'}
    program=${program%\'}
    bpf_out=$(mktemp /tmp/perf-validate-bpftrace.XXXXXX)
    coproc BPF_CHILD { exec "$child" probes forever work=20; }
    read -r ready <&"${BPF_CHILD[0]}" || ready=""
    pid=${ready//[^0-9]/}
    if [ -z "$pid" ]; then
        fail bpftrace "perf-test-child probes forever did not say it was ready: '$ready'"
    else
        program=${program//\'\$(pidof myservice)\'/$pid}
        # SIGINT after 3 s: bpftrace then prints its maps and exits (status 124 from timeout).
        timeout -s INT 3 bpftrace -p "$pid" -e "$program" >"$bpf_out" 2>&1 || true
        exec {BPF_CHILD[1]}>&-
        wait "$BPF_CHILD_PID" 2>/dev/null || true
        busiest=$(awk '/^@us\[probe.tick\]:/ { found = 1; next } found && /^\[/ { gsub(/[|@]/, " "); if ($3 + 0 > best) { best = $3 + 0; bucket = $1 " " $2 } } END { print bucket }' "$bpf_out")
        spans=$(awk '/^@us\[probe.tick\]:/ { found = 1; next } found && /^\[/ { gsub(/[|@]/, " "); total += $3 } END { print total + 0 }' "$bpf_out")
        if grep -qiE "permission|not permitted|could not attach|failed to attach" "$bpf_out" && [ "$spans" -eq 0 ]; then
            skip bpftrace "bpftrace could not attach here: $(grep -m1 -iE "permission|not permitted|attach" "$bpf_out")"
        elif [ "$busiest" = "[16, 32)" ] && [ "$spans" -gt 1000 ]; then
            pass bpftrace "the LiveProcess line read $spans probe.tick ends in 3 s, most in [16, 32) µs (the child's 20 µs spans)"
        else
            fail bpftrace "expected most of probe.tick's spans in [16, 32) µs, got '$busiest' of $spans: $(head -c 600 "$bpf_out")"
        fi
    fi
fi
checks_exit validate-probes
