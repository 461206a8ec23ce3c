#!/usr/bin/env bash
# Runs Perf's reliability scenarios with release builds of perf-reliability (and the
# perf-test-child and perf-report it launches), each under `timeout`, and writes the report: SIGKILL
# soaks, the crash story, disk faults, injected syscall faults (strace, an LD_PRELOAD short write),
# bad input, concurrency, watchdog false positives and privacy.
# Each scenario is PASS, MISS, or SKIPPED when it cannot run here (no privilege to mount, say):
# SKIPPED is never a pass and does not fail the run. Exit status 1 when any target is missed (or a
# scenario times out).
#
# Usage: scripts/reliability.sh [--quick] [--out FILE] [--no-build] [--only SCENARIO]...
#   --quick      CI's counts (a few minutes); writes /tmp/RELIABILITY-quick.md unless --out says
#   --out FILE   where the Markdown goes (default Reports/RELIABILITY.md, quick: /tmp/RELIABILITY-quick.md)
#   --no-build   use .build/release as it is (by default it is built first with scripts/lib.sh's
#                release_flags, CI's release build; a no-op when up to date); --skip-build is the same
#   --only NAME  run one scenario (repeatable); `perf-reliability --help` lists them
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

quick=0
build=1
out=""
only=()
command="scripts/reliability.sh${*:+ $*}"
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=1 ;;
        --no-build | --skip-build) build=0 ;;
        --out) out="$2"; shift ;;
        --only) only+=("$2"); shift ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        *) echo "error: unexpected argument '$1'" >&2; exit 2 ;;
    esac
    shift
done
if [ -z "$out" ]; then
    if [ "$quick" -eq 1 ]; then out=/tmp/RELIABILITY-quick.md; else out=Reports/RELIABILITY.md; fi
fi

bin=.build/release
# perf-reliability's build builds perf-test-child and perf-report beside it (Package.swift).
if [ "$build" -eq 1 ]; then release_build perf-reliability || exit 1; fi
require_binaries "$bin" perf-reliability perf-test-child perf-report

# name, then the timeout in seconds of a full run and of a quick run.
scenarios=(
    "journal-kill 900 150"
    "ledger-kill 600 120"
    "crash-story 600 120"
    "span-memory-kill 300 90"
    "burst-kill 300 120"
    "shared-directory 600 120"
    "disk-fsize 120 60"
    "disk-tmpfs 120 60"
    "disk-deleted 120 60"
    "disk-readonly 120 60"
    "disk-readonly-mount 120 60"
    "fault-write-eio 60 30"
    "fault-write-enospc 60 30"
    "fault-rename-exdev 60 30"
    "fault-openat-emfile 60 30"
    "fault-short-write 60 30"
    "bad-input 900 240"
    "concurrency 300 120"
    "watchdog 300 120"
    "privacy 600 120"
)

# The fault-* scenarios inject syscall failures with strace: install it when missing and possible
# (root with apt-get); without it they report SKIPPED, never PASS.
if ! command -v strace >/dev/null && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    if [ ${#only[@]} -eq 0 ] || [[ " ${only[*]} " =~ " fault-" ]]; then
        echo "== apt-get install strace (for the fault-* scenarios)" >&2
        apt-get install -y -qq strace >/dev/null 2>&1 || echo "== strace could not be installed" >&2
    fi
fi

results=$(mktemp)
line=$(mktemp)
trap 'rm -f "$results" "$line"' EXIT
mode=()
[ "$quick" -eq 1 ] && mode=(--quick)
started=$(date +%s)
for entry in "${scenarios[@]}"; do
    read -r name full short <<<"$entry"
    if [ ${#only[@]} -gt 0 ] && [[ ! " ${only[*]} " =~ " $name " ]]; then continue; fi
    limit=$full
    [ "$quick" -eq 1 ] && limit=$short
    echo "== $name (timeout ${limit} s)" >&2
    begin=$(date +%s)
    timeout -k 10 "$limit" "$bin/perf-reliability" "$name" "${mode[@]}" >"$line"
    status=$?
    took=$(( $(date +%s) - begin ))
    if grep -q '^{' "$line"; then
        grep '^{' "$line" | tail -n 1 >>"$results"
    else
        # No result line: the scenario hung past its timeout or died; both are misses.
        reason="exit status $status"
        [ "$status" -eq 124 ] || [ "$status" -eq 137 ] && reason="timed out after ${limit} s"
        printf '{"scenario":"%s","done":"did not finish","target":"a result line within %s s","result":"%s","pass":false,"status":"MISS","notes":"","seconds":%s,"counts":{}}\n' \
            "$name" "$limit" "$reason" "$took" >>"$results"
    fi
    verdict=MISS
    tail -n 1 "$results" | grep -q '"pass":true' && verdict=PASS
    tail -n 1 "$results" | grep -q '"status":"SKIPPED"' && verdict=SKIPPED
    echo "== $name: $verdict in ${took} s" >&2
    # A miss says why in CI's log, not only in the Markdown file left on the runner.
    [ "$verdict" = MISS ] && tail -n 1 "$results" >&2
done

"$bin/perf-reliability" report --results "$results" --out "$out" --command "$command"
status=$?
skipped=$(grep -c '"status":"SKIPPED"' "$results" || true)
echo "== wrote $out in $(( $(date +%s) - started )) s ($([ $status -eq 0 ] && echo 'no target missed' || echo 'targets missed'); $skipped skipped)" >&2
exit $status
