#!/usr/bin/env bash
# The test command: builds every target with warnings as errors, then runs the whole suite.
# Usage: scripts/test.sh [extra `swift test` arguments, e.g. --filter JournalKitTests]
#        scripts/test.sh --repeat N
#
# Without arguments the suite runs in two phases: everything else in parallel, then the suites
# nested in PerfGlobalStateTests (serialized: they install the process-global Perf and hang
# handler, and the watchdog's real-time tests assert wall-clock bounds that a saturated 2-core
# machine would blur).
#
# --repeat N builds once, then runs the whole suite (both phases) N times in a row, to catch a
# test that flakes; it stops at the first failing run and says which run of N it was.
set -euo pipefail
cd "$(dirname "$0")/.."

repeat=0
if [ "${1:-}" = "--repeat" ]; then
    if [ $# -ne 2 ] || ! [[ "$2" =~ ^[1-9][0-9]*$ ]]; then
        echo "usage: scripts/test.sh --repeat N   (N a positive whole number; no other arguments)" >&2
        exit 2
    fi
    repeat=$2
    shift 2
fi

. scripts/lib.sh
swift build --build-tests "${debug_flags[@]}"
if [ $# -gt 0 ]; then
    exec swift test --skip-build "$@"
fi
timing='PerfGlobalStateTests'
if [ "$repeat" -eq 0 ]; then
    swift test --skip-build --skip "$timing"
    swift test --skip-build --filter "$timing"
    exit 0
fi
for run in $(seq 1 "$repeat"); do
    echo "== scripts/test.sh --repeat: run $run of $repeat"
    if ! swift test --skip-build --skip "$timing" || ! swift test --skip-build --filter "$timing"; then
        echo "== scripts/test.sh --repeat: run $run of $repeat FAILED ($((run - 1)) earlier runs passed)" >&2
        exit 1
    fi
done
echo "== scripts/test.sh --repeat: all $repeat runs passed"
