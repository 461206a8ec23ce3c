#!/usr/bin/env bash
# Kills a journal-writing child process 1,000 times (or N) at random moments and checks that
# every acknowledged entry was recovered. Prints: kills, acknowledged, lost (must be 0), torn
# tails observed. Exit status 0 only when nothing acknowledged was lost.
# Usage: scripts/journal-kill.sh [kills=1000] [directory]
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
kills="${1:-1000}"
release_build perf-test-child
exec .build/release/perf-test-child journal-append soak "$kills" ${2:+"$2"}
