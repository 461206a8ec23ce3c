#!/usr/bin/env bash
# The test command: builds every target with warnings as errors, then runs the whole suite.
# Usage: scripts/test.sh [extra `swift test` arguments, e.g. --filter JournalKitTests]
#
# Without arguments the suite runs in two phases: everything but the real-time timing suites in
# parallel, then those suites alone, because they assert hang bounds measured on the wall clock
# (tolerances, not timings) and the parallel phase saturates a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
flags=(-Xswiftc -warnings-as-errors -Xcc -Werror)
swift build --build-tests "${flags[@]}"
if [ $# -gt 0 ]; then
    exec swift test --skip-build "$@"
fi
timing='WatchdogRealTimeTests|PerfGlobalStateTests'
swift test --skip-build --skip "$timing"
swift test --skip-build --filter "$timing"
