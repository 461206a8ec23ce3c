#!/usr/bin/env bash
# The project checks itself with its own CI gate: run the demo with recording on, check its report
# against scripts/perf-budgets.json (hard gates only: counts, hangs, expected spans, ledger health,
# so CI never flakes on timing), then prove the gate bites: a deliberately breached copy must exit 1.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The flags of scripts/test.sh, so running both does not rebuild everything twice.
. scripts/lib.sh
swift build --product perf-report "${debug_flags[@]}"
bin=$(swift build --show-bin-path "${debug_flags[@]}")/perf-report

echo "== perf-report demo (recording on)"
"$bin" demo --dir "$work/data" -o "$work/report.json" >/dev/null

echo "== perf-report check against scripts/perf-budgets.json (must pass)"
"$bin" check "$work/report.json" --budgets scripts/perf-budgets.json --format github -o "$work/verdict.json"
grep -q '"exitCode":0' "$work/verdict.json"

echo "== perf-report check against scripts/perf-budgets-breached.json (must exit 1)"
status=0
"$bin" check "$work/report.json" --budgets scripts/perf-budgets-breached.json --format text \
    -o "$work/breached.json" || status=$?
if [ "$status" -ne 1 ]; then
    echo "error: the breached budgets exited $status, not 1: the gate does not bite" >&2
    exit 1
fi
grep -q '"verdict":"fail"' "$work/breached.json"
echo "== budget gate OK (pass exits 0, breach exits 1)"
