#!/usr/bin/env bash
# Regenerates Reports/sample/ from the demo: the report, its summary, every export, and a
# screenshot of the HTML page (headless Chromium, installed by scripts/validate/html.sh).
# Usage: scripts/sample.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
release_build perf-report
bin=.build/release/perf-report
out=Reports/sample
mkdir -p "$out"
"$bin" demo -o "$out/performance-report.json" > "$out/summary.txt"
"$bin" export "$out/performance-report.json" --format chrome -o "$out/trace.json"
"$bin" export "$out/performance-report.json" --format otlp -o "$out/otlp.json"
"$bin" export "$out/performance-report.json" --format prometheus -o "$out/perf.prom"
"$bin" export "$out/performance-report.json" --format html -o "$out/report.html"
scripts/validate/html.sh "$out/report.html" "$out/report.png"
ls -l "$out"
