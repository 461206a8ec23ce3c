#!/usr/bin/env bash
# Installs up front the tools the validators otherwise install on first use, so that .ci/run can
# fetch them in the background while it compiles (the downloads wait on the network, the build on
# the CPU). Each validator still installs what it finds missing when run alone, with the same
# helpers (scripts/validate/venv.sh, scripts/validate/debian.sh); a tool that cannot be had here is
# left to its validator to report as SKIPPED, so this script never fails a run.
#   Debian, apt-get install   chromium (validate/html.sh), libxml2-utils (validate-exports.sh),
#                             linux-perf and bpftrace (validate-probes.sh), strace (reliability.sh),
#                             golang-go (validate-pprof.sh: go tool pprof)
#   Debian, unpacked          prometheus, prometheus-node-exporter into $PERF_VALIDATE_TOOLS
#                             (validate-exports.sh, validate-prometheus-scrape.sh)
#   PyPI, .build/validate-venv
#                             opentelemetry-proto protobuf junitparser (validate-exports.sh),
#                             pillow html5lib (validate/html.sh)
# Prints one line per group with its time and outcome.
#
# Usage: scripts/install-tools.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=scripts/validate/venv.sh
source scripts/validate/venv.sh
# shellcheck source=scripts/validate/debian.sh
source scripts/validate/debian.sh
tools=${PERF_VALIDATE_TOOLS:-$PWD/.build/validate-tools}

# timed LABEL COMMAND...: runs COMMAND, then prints LABEL, its outcome and its seconds.
timed() {
    local label=$1 start=$SECONDS outcome="done"
    shift
    "$@" || outcome="not installed (the validator will say why)"
    echo "install-tools: $label: $outcome in $((SECONDS - start)) s"
}

debian_packages=()
for tool in chromium:chromium xmllint:libxml2-utils perf:linux-perf bpftrace:bpftrace strace:strace go:golang-go; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || debian_packages+=("${tool#*:}")
done
if [ ${#debian_packages[@]} -gt 0 ]; then
    if validate_can_apt; then
        timed "apt-get install ${debian_packages[*]}" validate_apt_install "${debian_packages[@]}"
    else
        echo "install-tools: ${debian_packages[*]} missing, and apt-get is not available to root"
    fi
fi

if [ ! -x "$tools/root/usr/bin/prometheus" ] || [ ! -x "$tools/root/usr/bin/promtool" ] \
    || [ ! -x "$tools/root/usr/bin/prometheus-node-exporter" ]; then
    timed "apt-get download prometheus prometheus-node-exporter" \
        validate_debian_unpack "$tools" prometheus prometheus-node-exporter
fi

timed "pip install into ${validate_venv_dir#"$PWD"/}" validate_venv_require \
    google.protobuf,opentelemetry.proto.collector.trace.v1.trace_service_pb2,junitparser,PIL,html5lib \
    opentelemetry-proto protobuf junitparser pillow html5lib
exit 0
