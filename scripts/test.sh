#!/usr/bin/env bash
# The test command: builds every target with warnings as errors, then runs the whole suite.
# Usage: scripts/test.sh [extra `swift test` arguments, e.g. --filter JournalKitTests]
#
# Without arguments the suite runs in two phases: everything else in parallel, then the suites
# nested in PerfGlobalStateTests (serialized: they install the process-global Perf and hang
# handler, and the watchdog's real-time tests assert wall-clock bounds that a saturated 2-core
# machine would blur).
set -euo pipefail
cd "$(dirname "$0")/.."
flags=(-Xswiftc -warnings-as-errors -Xcc -Werror)
swift build --build-tests "${flags[@]}"
if [ $# -gt 0 ]; then
    exec swift test --skip-build "$@"
fi
timing='PerfGlobalStateTests'
swift test --skip-build --skip "$timing"
swift test --skip-build --filter "$timing"
