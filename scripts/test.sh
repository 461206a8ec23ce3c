#!/usr/bin/env bash
# The test command: builds every target with warnings as errors, then runs the whole suite.
# Usage: scripts/test.sh [extra `swift test` arguments, e.g. --filter JournalKitTests]
set -euo pipefail
cd "$(dirname "$0")/.."
flags=(-Xswiftc -warnings-as-errors -Xcc -Werror)
swift build --build-tests "${flags[@]}"
swift test --skip-build "$@"
