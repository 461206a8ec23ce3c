#!/usr/bin/env bash
# The test command: checks formatting, builds every target with warnings as errors, then runs
# the whole suite.
# Usage: scripts/test.sh [extra `swift test` arguments, e.g. --filter JournalKitTests]
#        scripts/test.sh --repeat N
#        scripts/test.sh --fast
#
# Without arguments the suite runs in two phases: everything else in parallel, then the suites
# nested in PerfGlobalStateTests (serialized: they install the process-global Perf and hang
# handler, and the watchdog's real-time tests assert wall-clock bounds that a saturated 2-core
# machine would blur).
#
# --repeat N builds once, then runs the whole suite (both phases) N times in a row, to catch a
# test that flakes; it stops at the first failing run and says which run of N it was.
#
# --fast is for the edit loop: about a minute after the build. It leaves out the suites that time
# the machine or spawn processes (listed below, each with its reason, and printed before the run
# with the number of tests left out). Not a substitute for the full run, which CI makes.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

# The suites --fast leaves out: name, then why.
fast_left_out=(
    "PerfGlobalStateTests|the process-global Perf, serialized; the watchdog's real-time and timing-matrix tests"
    "SharedDirectoryLedgerTests|four writer processes, 10 runs per ledger cap"
    "SessionCrashTests|SIGKILLs session children in a loop"
    "SIGKILLTests|SIGKILLs journal children in a loop"
    "LedgerCrashTests|SIGKILLs ledger children"
    "SpanMemoryCrashTests|SIGKILLs span-memory children"
    "SessionStartRaceTests|session children racing to start"
    "SessionIndexProcessTests|session children, killed and restarted"
    "SessionIndexReportTests|session children"
    "ReliabilityFileSizeTests|writer children under RLIMIT_FSIZE"
    "MetricsEndpointDescriptorLimitTests|an endpoint child out of file descriptors"
    "InstallCycleMemoryTests|1,000 install cycles in a child, its RSS measured"
    "ProbeRecordTests|perf record of a child (root and linux-perf)"
    "SpanFuzzTests|seeded concurrent fuzzing, minutes of CPU"
    "PipelineFuzzTests|seeded concurrent fuzzing, each flush under a deadline a loaded machine misses"
)

repeat=0
fast=0
case "${1:-}" in
    --repeat)
        if [ $# -ne 2 ] || ! [[ "$2" =~ ^[1-9][0-9]*$ ]]; then
            echo "usage: scripts/test.sh --repeat N   (N a positive whole number; no other arguments)" >&2
            exit 2
        fi
        repeat=$2
        shift 2
        ;;
    --fast)
        if [ $# -ne 1 ]; then
            echo "usage: scripts/test.sh --fast   (no other arguments)" >&2
            exit 2
        fi
        fast=1
        shift
        ;;
esac

# Formatting first (a few seconds): the package's .swift-format, strict, on every Swift file of
# Sources, Tests and the manifest; `swift format format -i <files>` fixes what it reports.
# shellcheck disable=SC2046  # one argument per file
swift format lint --strict $(git ls-files 'Sources/*.swift' 'Tests/*.swift' Package.swift 2>/dev/null ||
    find Sources Tests Package.swift -name '*.swift')
swift build --build-tests "${debug_flags[@]}"
if [ $# -gt 0 ]; then
    exec swift test --skip-build "$@"
fi
timing='PerfGlobalStateTests'
if [ "$fast" -eq 1 ]; then
    names=()
    echo "== scripts/test.sh --fast leaves out (scripts/test.sh runs them):"
    for entry in "${fast_left_out[@]}"; do
        names+=("${entry%%|*}")
        printf '   %-38s %s\n' "${entry%%|*}" "${entry#*|}"
    done
    # Anchored on the suite's place in a test's name, Module.Suite/test, so no other suite that
    # merely contains the name is left out.
    pattern="\\.($(IFS='|'; echo "${names[*]}"))/"
    listed=$(swift test list --skip-build 2>/dev/null || true)
    all=$(grep -c / <<<"$listed" || true)
    left=$(grep -cE "$pattern" <<<"$listed" || true)
    echo "== $left of $all tests left out; running the other $((all - left))"
    exec swift test --skip-build --skip "$pattern"
fi
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
