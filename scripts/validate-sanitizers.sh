#!/usr/bin/env bash
# Perf under the sanitizers a user's CI runs (issue 19), in two parts:
#   host    a program that depends on Perf by path (scripts/sanitizer-host), built with
#           --sanitize=address (LeakSanitizer on) and with --sanitize=thread, installs Perf, ends
#           spans under and over budget from two threads and blocks its watched queue into a hang;
#           once shutting Perf down and once exiting with it installed. Passes when the ledger
#           holds the over-budget spans and the hang (culprit blockTheWatchedQueue) and the
#           sanitizer reported nothing.
#   suites  the test suites that hold Perf's concurrency and C code, under ASan+LSan and TSan
#           (allocation-counting tests report skipped there: the sanitizer owns malloc).
# Suppressions live in scripts/sanitizers/*.supp, each entry with its reason.
#
# Usage: scripts/validate-sanitizers.sh [host|suites]...   (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(host suites)
supp=$root/scripts/sanitizers
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1"
export TSAN_OPTIONS="suppressions=$supp/tsan.supp:halt_on_error=1:second_deadlock_stack=1"
failures=0
work=$(mktemp -d /tmp/perf-sanitizers.XXXXXX)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL $1"; failures=$((failures + 1)); }

# A sanitizer's report in a log, or nothing.
reports() { grep -E "ERROR: (Address|Leak)Sanitizer|WARNING: ThreadSanitizer|runtime error:" "$1" || true; }

host() {
    local sanitizer=$1 scratch=$root/.build/sanitizer-host-$1
    echo "== sanitizer host, --sanitize=$sanitizer: build"
    (cd scripts/sanitizer-host && swift build --sanitize="$sanitizer" --scratch-path "$scratch" >"$work/build-$sanitizer.log" 2>&1) || {
        tail -30 "$work/build-$sanitizer.log"; fail "host $sanitizer: build"; return; }
    local binary=$scratch/debug/sanitizer-host
    for ending in shutdown exit; do
        local data=$work/data-$sanitizer-$ending log=$work/run-$sanitizer-$ending.log status=0
        "$binary" "$data" "$ending" >"$log" 2>&1 || status=$?
        local spans hangs found
        spans=$(grep -c '"kind":"span".*"name":"host.slow"' "$data/perf-events.jsonl" 2>/dev/null || true)
        hangs=$(grep -c '"kind":"hang".*blockTheWatchedQueue' "$data/perf-events.jsonl" 2>/dev/null || true)
        found=$(reports "$log")
        if [ "$status" -ne 0 ] || [ -n "$found" ] || [ "${spans:-0}" -lt 20 ] || [ "${hangs:-0}" -lt 1 ]; then
            fail "host $sanitizer $ending: exit $status, ${spans:-0} of 20 over-budget span lines, ${hangs:-0} hang lines naming blockTheWatchedQueue"
            [ -n "$found" ] && echo "$found" | head -5
            tail -40 "$log"
        else
            echo "PASS host $sanitizer $ending: exit 0, $spans over-budget span lines, $hangs hang line(s) naming blockTheWatchedQueue, no sanitizer report"
        fi
    done
}

suites() {
    local sanitizer=$1 filter=$2 scratch=$root/.build/sanitizer-suites-$1
    echo "== test suites under --sanitize=$sanitizer: build"
    swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch" >"$work/suites-build-$sanitizer.log" 2>&1 || {
        tail -30 "$work/suites-build-$sanitizer.log"; fail "suites $sanitizer: build"; return; }
    local log=$work/suites-$sanitizer.log status=0 started
    started=$(date +%s)
    echo "== test suites under --sanitize=$sanitizer: $filter"
    swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" --filter "$filter" >"$log" 2>&1 || status=$?
    local found summary
    found=$(reports "$log")
    summary=$(grep -E "^. Test run with" "$log" | tail -1 || true)
    if [ "$status" -ne 0 ] || [ -n "$found" ]; then
        fail "suites $sanitizer: exit $status; $summary"
        grep -E "✘" "$log" | head -20 || true
        [ -n "$found" ] && grep -A30 -E "ERROR: (Address|Leak)Sanitizer|WARNING: ThreadSanitizer" "$log" | head -80
    else
        echo "PASS suites $sanitizer ($(( $(date +%s) - started )) s): $summary; no sanitizer report"
    fi
}

for part in "${parts[@]}"; do
    case "$part" in
        host) host address; host thread ;;
        suites)
            suites address "${PERF_ASAN_SUITES:-JournalKitTests|PerfCoreTests}"
            suites thread "${PERF_TSAN_SUITES:-JournalKitTests|PerfCoreTests}"
            ;;
        *) echo "usage: scripts/validate-sanitizers.sh [host|suites]..." >&2; exit 2 ;;
    esac
done
if [ "$failures" -gt 0 ]; then
    echo "== sanitizers: $failures FAILED"
    exit 1
fi
echo "== sanitizers: every check passed"
