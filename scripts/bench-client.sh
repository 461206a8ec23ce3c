#!/usr/bin/env bash
# The under-budget Perf.begin/end as a user's package compiles it: makes a temporary
# SwiftPM package that depends on this checkout by path (offline: no other dependency), builds it
# in release, and prints the median cost of Perf.begin+end against a clock_gettime(CLOCK_MONOTONIC)
# pair measured in alternating batches of the same run, from 1 and from 2 threads, with the ratio,
# then the same for a synchronous Perf.measure from 1 thread.
#
#   scripts/bench-client.sh                 build and run in a temporary directory (removed afterwards)
#   scripts/bench-client.sh --keep          keep the package and print its path
#   scripts/bench-client.sh --dir DIR       make (or reuse) the package in DIR and keep it: a second
#                                           run rebuilds only what changed, so it can wait for a calm host
#   scripts/bench-client.sh --report FILE   also write the figures, the command, commit and host to
#                                           FILE as Markdown (Reports/BENCH-CLIENT.md is the committed one)
#
# Not wired into CI; the goals, where the TSC span clock is eligible: a ratio ≤ 0.6 for begin+end
# and ≤ 0.7 for measure.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
arguments="$*"
keep=0
report=
dir=
while [ $# -gt 0 ]; do
    case "$1" in
        --keep) keep=1 ;;
        --report)
            [ $# -ge 2 ] || { echo "error: --report needs a file" >&2; exit 2; }
            report=$2
            shift ;;
        --dir)
            [ $# -ge 2 ] || { echo "error: --dir needs a directory" >&2; exit 2; }
            dir=$2
            keep=1
            shift ;;
        -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "error: unexpected argument '$1' (usage: scripts/bench-client.sh [--keep] [--dir DIR] [--report FILE])" >&2; exit 2 ;;
    esac
    shift
done

if [ -n "$dir" ]; then
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
else
    dir="$(mktemp -d "${TMPDIR:-/tmp}/perf-bench-client.XXXXXX")"
fi
if [ "$keep" = 0 ]; then trap 'rm -rf "$dir"' EXIT; fi
mkdir -p "$dir/Sources/PerfClientBench"
cat > "$dir/Package.swift" <<SWIFT
// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "PerfClientBench",
    dependencies: [.package(path: "$root")],
    targets: [
        .executableTarget(
            name: "PerfClientBench",
            dependencies: [.product(name: "Perf", package: "$(basename "$root")")]),
    ],
    swiftLanguageModes: [.v6]
)
SWIFT
cat > "$dir/Sources/PerfClientBench/main.swift" <<'SWIFT'
// Perf.begin/end under budget as a client compiles it, against a clock_gettime pair.
import Foundation
import Glibc
import Perf

@inline(never) func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }

func monotonic() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

@inline(never) func clockPairs(_ count: Int) {
    var total: UInt64 = 0
    for _ in 0..<count {
        let start = monotonic()
        total &+= monotonic() &- start
    }
    blackHole(total)
}

@inline(never) func spans(_ count: Int) {
    for _ in 0..<count { Perf.begin("client.span", slowMs: 1000).end() }
}

@inline(never) func measures(_ count: Int) {
    for _ in 0..<count { Perf.measure("client.measure", slowMs: 1000) { blackHole(count) } }
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

/// Alternating batches; the medians of each side's per-op costs.
func measure(rounds: Int, iterations: Int, _ subject: (Int) -> Void = spans) -> (span: Double, pair: Double) {
    var spanCosts: [Double] = []
    var pairCosts: [Double] = []
    for round in -1..<rounds {
        var start = monotonic()
        clockPairs(iterations)
        let pair = Double(monotonic() - start) / Double(iterations)
        start = monotonic()
        subject(iterations)
        let span = Double(monotonic() - start) / Double(iterations)
        if round >= 0 {
            pairCosts.append(pair)
            spanCosts.append(span)
        }
    }
    return (median(spanCosts), median(pairCosts))
}

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("perf-client-bench-\(getpid())")
defer { try? FileManager.default.removeItem(at: directory) }
Perf.install(
    Perf.Configuration(directory: directory, app: Perf.AppInfo(name: "perf-client-bench"), recording: .enabled))
// A program's spans switch to the TSC at the span clock's first re-check, a second after install.
Thread.sleep(forTimeInterval: 1.5)
print("span clock: \(Perf.spanClock)")
let rounds = 31
let iterations = 200_000
let one = measure(rounds: rounds, iterations: iterations)
print(String(format: "1 thread:  Perf.begin+end %.1f ns, clock_gettime pair %.1f ns, ratio %.2f",
    one.span, one.pair, one.span / one.pair))
final class Box: @unchecked Sendable { var result = (span: 0.0, pair: 0.0) }
let boxes = [Box(), Box()]
let group = DispatchGroup()
for box in boxes {
    group.enter()
    Thread {
        box.result = measure(rounds: rounds, iterations: iterations)
        group.leave()
    }.start()
}
group.wait()
let span2 = boxes.map(\.result.span).reduce(0, +) / 2
let pair2 = boxes.map(\.result.pair).reduce(0, +) / 2
print(String(format: "2 threads: Perf.begin+end %.1f ns, clock_gettime pair %.1f ns, ratio %.2f (mean of thread medians)",
    span2, pair2, span2 / pair2))
let measured = measure(rounds: rounds, iterations: iterations, measures)
print(String(format: "1 thread:  Perf.measure (sync) %.1f ns, clock_gettime pair %.1f ns, ratio %.2f",
    measured.span, measured.pair, measured.span / measured.pair))
Perf.shutdown()
SWIFT
echo "== building $dir (release, path dependency on $root)" >&2
swift build -c release --package-path "$dir" 2>&1 | grep -E "error|warning:|Compiling PerfClientBench|Build" >&2 || true
output=$("$dir/.build/release/PerfClientBench")
echo "$output"
if [ -n "$report" ]; then
    {
        echo "# Perf.begin/end and Perf.measure as a client package compiles them"
        echo
        echo "Command: \`scripts/bench-client.sh $arguments\`"
        echo "Commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Package.swift || echo ' (with uncommitted changes)')"
        echo "Date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "Host: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(swift --version 2>&1 | head -1)"
        echo
        echo "A temporary SwiftPM package depending on this checkout by path, built in release, times"
        echo "\`Perf.begin(\"client.span\", slowMs: 1000).end()\` (under budget) against a"
        echo "\`clock_gettime(CLOCK_MONOTONIC)\` pair in 31 alternating batches of 200,000 each, medians;"
        echo "then \`Perf.measure(\"client.measure\", slowMs: 1000) { blackHole(count) }\` the same way."
        echo "The goals where the TSC span clock is eligible: ratio ≤ 0.6 for begin+end, ≤ 0.7 for measure."
        echo
        echo '```'
        echo "$output"
        echo '```'
    } >"$report"
    echo "wrote $report" >&2
fi
if [ "$keep" = 1 ]; then echo "kept: $dir" >&2; fi
