#!/usr/bin/env bash
# The size of a program that links only the runtime: imports Perf, calls Perf.begin/end and runs
# a Perf.HangWatchdog, built in release and stripped. With a revision argument it measures that
# revision of the package instead (checked out into a temporary worktree), for before/after.
#
#   scripts/binary-size.sh            # this tree
#   scripts/binary-size.sh 1ec8a93    # another revision
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d /tmp/perf-size.XXXXXX)"
trap 'git -C "$root" worktree remove --force "$work/package" 2>/dev/null || true; rm -rf "$work"' EXIT
package="$root"
if [[ $# -gt 0 ]]; then
    git -C "$root" worktree add -q --detach "$work/package" "$1"
    package="$work/package"
fi
mkdir -p "$work/probe/Sources/probe"
cat > "$work/probe/Package.swift" <<SWIFT
// swift-tools-version:6.0
import PackageDescription
let package = Package(
    name: "probe",
    dependencies: [.package(path: "$package")],
    targets: [.executableTarget(name: "probe", dependencies: [.product(name: "Perf", package: "$(basename "$package")")])]
)
SWIFT
cat > "$work/probe/Sources/probe/main.swift" <<'SWIFT'
import Dispatch
import Perf

Perf.install(Perf.Configuration(recording: .disabled))
let queue = DispatchQueue(label: "probe")
let watchdog = Perf.HangWatchdog(monitoring: .queue(queue))
watchdog.start()
var span: Perf.Span? = Perf.begin("probe.work", slowMs: 100)   // moved into the closure: a Span is ~Copyable
queue.sync { span.take()?.end() }
watchdog.stop()
Perf.shutdown()
SWIFT
swift build -c release --package-path "$work/probe" >&2
binary="$work/probe/.build/release/probe"
strip -o "$work/probe.stripped" "$binary"
echo "revision: $(git -C "$package" rev-parse --short HEAD)"
echo "unstripped bytes: $(stat -c %s "$binary")"
echo "stripped bytes: $(stat -c %s "$work/probe.stripped")"
