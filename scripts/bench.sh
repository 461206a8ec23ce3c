#!/usr/bin/env bash
# Benchmarks: builds perf-bench and perf-report in release, runs the benchmarks, checks the
# Google Benchmark output's structure, and gates it with perf-report check.
#
#   scripts/bench.sh                 full run: times a --quick run first (its wall time goes into
#                                    the header), then regenerates Reports/BENCHMARKS.md, .json
#                                    and .gbench.json
#   scripts/bench.sh --quick         quick run (under a minute) into a temporary directory (kept
#                                    with --out DIR), then the budget gate; exits non-zero if it fails
#   --no-build                       use the binaries already in .build/release (CI builds them
#                                    first, with the flags of scripts/lib.sh's release_flags);
#                                    --skip-build is the same
#
# The gate is perf-report check of the Google Benchmark JSON against scripts/perf-bench-budgets.json:
# every expected figure present, allocation counts at zero, and time limits so loose (about 10× the
# targets) that only a gross regression breaks them on a noisy shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

quick=0
build=1
out=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=1 ;;
        --no-build | --skip-build) build=0 ;;
        --out) out="${2:?--out needs a directory}"; shift ;;
        -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "error: unexpected argument '$1' (usage: scripts/bench.sh [--quick] [--no-build] [--out DIR])" >&2; exit 2 ;;
    esac
    shift
done

if [ "$build" -eq 1 ]; then
    swift build "${bench_flags[@]}" --product perf-bench
    swift build "${bench_flags[@]}" --product perf-report
fi
bin=.build/release
require_binaries "$bin" perf-bench perf-report

# Structure of Google Benchmark's --benchmark_format=json, as compare.py reads it; and every row
# of the JSON report present as a run.
validate() {
    if ! command -v python3 >/dev/null; then
        echo "warning: python3 not found; Google Benchmark JSON structure not validated" >&2
        return 0
    fi
    python3 - "$1" "$2" <<'PY'
import json, sys
gbench, rows = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))["rows"]
errors = []
def need(cond, message):
    if not cond: errors.append(message)
number = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
integer = lambda v: isinstance(v, int) and not isinstance(v, bool)
context = gbench.get("context")
need(isinstance(context, dict) and isinstance(gbench.get("benchmarks"), list), "top level: context and benchmarks")
for key, check in [("date", str), ("host_name", str), ("executable", str), ("library_build_type", str)]:
    need(isinstance(context.get(key), check), f"context.{key}")
for key in ("num_cpus", "mhz_per_cpu"):
    need(integer(context.get(key)), f"context.{key} is an integer")
need(isinstance(context.get("cpu_scaling_enabled"), bool), "context.cpu_scaling_enabled is a bool")
need(all(number(v) for v in context.get("load_avg", [None])), "context.load_avg numbers")
for cache in context.get("caches", []):
    need(isinstance(cache.get("type"), str) and all(integer(cache.get(k)) for k in ("level", "size", "num_sharing")),
         f"context.caches entry {cache}")
standard = {"name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions", "threads",
            "aggregate_name", "aggregate_unit", "iterations", "real_time", "cpu_time", "time_unit"}
families = {}
for entry in gbench["benchmarks"]:
    name = entry.get("name")
    for key in ("name", "run_name", "aggregate_name"):
        need(isinstance(entry.get(key), str), f"{name}: {key} is a string")
    for key in ("family_index", "per_family_instance_index", "repetitions", "threads", "iterations"):
        need(integer(entry.get(key)) and entry.get(key) >= 0, f"{name}: {key} is a whole number")
    need(entry.get("run_type") == "aggregate", f"{name}: run_type aggregate")
    need(name == f"{entry.get('run_name')}_{entry.get('aggregate_name')}", f"{name}: name is run_name_aggregate")
    need(families.setdefault(entry.get("run_name"), entry.get("family_index")) == entry.get("family_index"),
         f"{name}: one family_index per run")
    if "time_unit" in entry:
        # compare.py compares entries that have time_unit, real_time and cpu_time.
        need(entry["time_unit"] in ("ns", "us", "ms", "s"), f"{name}: time_unit")
        need(number(entry.get("real_time")) and number(entry.get("cpu_time")), f"{name}: real_time, cpu_time")
        need(entry.get("aggregate_unit") == "time", f"{name}: aggregate_unit time")
    else:
        # Not a time: no time keys, so no tool reads it as one; its value is a counter.
        need(not {"real_time", "cpu_time", "aggregate_unit"} & entry.keys(), f"{name}: a counter entry has no time keys")
        need(any(number(v) for k, v in entry.items() if k not in standard), f"{name}: a counter entry has a counter")
need(len(set(families.values())) == len(families), "family_index distinct per run")
runs = set(families)
missing = [f"{r['group']}/{r['name']}" for r in rows if f"{r['group']}/{r['name']}" not in runs]
need(not missing, f"rows missing from the Google Benchmark JSON: {missing}")
if errors:
    print("error: invalid Google Benchmark JSON " + sys.argv[1] + ":\n  " + "\n  ".join(errors), file=sys.stderr)
    sys.exit(1)
print(f"Google Benchmark JSON OK: {len(gbench['benchmarks'])} entries, {len(runs)} runs, {len(rows)} rows")
PY
}

# A quick run into $1, validated and gated; its wall time in seconds goes to $1/wall-seconds.
quick_run() {
    local dir=$1
    local start end
    start=$(date +%s.%N)
    PERF_BENCH_COMMAND="scripts/bench.sh --quick" "$bin/perf-bench" --quick \
        --json "$dir/BENCHMARKS.json" --markdown "$dir/BENCHMARKS.md" --gbench "$dir/BENCHMARKS.gbench.json"
    end=$(date +%s.%N)
    validate "$dir/BENCHMARKS.gbench.json" "$dir/BENCHMARKS.json"
    echo "== perf-report check of the quick run against scripts/perf-bench-budgets.json"
    "$bin/perf-report" check "$dir/BENCHMARKS.gbench.json" --budgets scripts/perf-bench-budgets.json \
        --format text -o "$dir/verdict.json"
    awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f\n", e - s }' >"$dir/wall-seconds"
}

if [ "$quick" -eq 1 ]; then
    if [ -z "$out" ]; then
        out=$(mktemp -d /tmp/perf-bench-quick.XXXXXX)
    fi
    mkdir -p "$out"
    quick_run "$out"
    echo "== quick run OK in $(cat "$out/wall-seconds") s (target < 60 s); results in $out"
    exit 0
fi

scratch=$(mktemp -d /tmp/perf-bench-quick.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
echo "== quick run first: gate, and its wall time for the header"
quick_run "$scratch"
seconds=$(cat "$scratch/wall-seconds")
echo "== full run → Reports/BENCHMARKS.{md,json,gbench.json}"
PERF_BENCH_COMMAND="scripts/bench.sh" PERF_BENCH_QUICK_SECONDS="$seconds" "$bin/perf-bench" \
    --json Reports/BENCHMARKS.json --markdown Reports/BENCHMARKS.md --gbench Reports/BENCHMARKS.gbench.json
validate Reports/BENCHMARKS.gbench.json Reports/BENCHMARKS.json
