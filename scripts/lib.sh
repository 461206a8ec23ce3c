# Sourced by the scripts (bash): the build flags they share, their PASS / FAIL / SKIPPED lines, the
# binaries they run (found, or built with the shared flags) and their --no-build option.
#
# Build flags. A build with other flags recompiles every module (minutes of CI's time), so two
# scripts that build the same products use the same array:
#   debug_flags     scripts/test.sh's debug build: warnings are errors, Swift's and the C shims'
#   release_flags   CI's release build of the tests and tools (.ci/run), which scripts/bench.sh,
#                   scripts/reliability.sh and scripts/validate-probes.sh run; -enable-testing so
#                   the release tests can reach internal declarations
#   bench_flags     scripts/bench.sh's own release build, without -enable-testing, as users' are
#   sanitizer_flags scripts/validate-sanitizers.sh's builds: line tables only for debug info, all
#                   a sanitizer's report needs (function, file and line), and less to compile
#                   and link than full debug info
#
# Checks. Each prints one line and is counted:
#   pass CHECK MESSAGE       "PASS CHECK: MESSAGE"
#   fail CHECK MESSAGE       "FAIL CHECK: MESSAGE" on stderr; the script goes on
#   skip CHECK REASON        "SKIPPED CHECK: REASON": the check could not run here, never a pass
#   die CHECK MESSAGE        fail, then exit 1: nothing after it can be checked
#   checks_exit NAME [--strict]
#                            prints NAME's totals; returns 1 on any FAIL (with --strict, on any
#                            SKIPPED too), else 0
#
# Binaries:
#   newest_binary NAME       prints .build/release/NAME or .build/debug/NAME, whichever is newer;
#                            when neither exists, builds the debug one with debug_flags first
#   release_build NAME...    builds the products NAME... with release_flags (a no-op when up to date)
#   require_binaries DIR NAME...
#                            exits 1 naming the first of DIR/NAME... that is missing
#   is_no_build ARGUMENT     true for --no-build and its older spelling --skip-build
#
# Time: cpu_seconds prints the CPU time (user + system, whole seconds) that this shell's finished
# children have used so far; beside a wall time it tells a step that computes from one that waits,
# and it holds on a machine shared with other work, where wall times do not.
# shellcheck shell=bash disable=SC2034  # the arrays are read by the scripts that source this file

debug_flags=(-Xswiftc -warnings-as-errors -Xcc -Werror)
release_flags=(-c release -Xswiftc -enable-testing -Xswiftc -warnings-as-errors)
bench_flags=(-c release -Xswiftc -warnings-as-errors)
sanitizer_flags=(-Xswiftc -gline-tables-only -Xcc -gline-tables-only)

checks_passed=0
checks_failed=()
checks_skipped=()

pass() {
    echo "PASS $1: $2"
    checks_passed=$((checks_passed + 1))
}

fail() {
    echo "FAIL $1: $2" >&2
    checks_failed+=("$1: $2")
}

skip() {
    echo "SKIPPED $1: $2"
    checks_skipped+=("$1: $2")
}

die() {
    fail "$1" "$2"
    exit 1
}

checks_exit() {
    local name=$1 strict=${2:-} line
    local counts="$checks_passed passed, ${#checks_failed[@]} failed, ${#checks_skipped[@]} SKIPPED (not checked)"
    if [ ${#checks_failed[@]} -eq 0 ] && [ ${#checks_skipped[@]} -eq 0 ]; then
        echo "$name: every check passed ($checks_passed)"
        return 0
    fi
    echo "$name: $counts"
    for line in "${checks_skipped[@]}"; do echo "  SKIPPED $line"; done
    for line in "${checks_failed[@]}"; do echo "  FAIL $line"; done
    [ ${#checks_failed[@]} -eq 0 ] || return 1
    if [ "$strict" = --strict ] && [ ${#checks_skipped[@]} -gt 0 ]; then
        echo "$name: --strict: a skipped check fails the run" >&2
        return 1
    fi
    return 0
}

newest_binary() {
    local name=$1 candidate found=""
    for candidate in .build/release/"$name" .build/debug/"$name"; do
        if [ -x "$candidate" ] && { [ -z "$found" ] || [ "$candidate" -nt "$found" ]; }; then found=$candidate; fi
    done
    if [ -z "$found" ]; then
        echo "== building $name (debug)" >&2
        swift build --product "$name" "${debug_flags[@]}" >&2 || return 1
        found=$(swift build --show-bin-path "${debug_flags[@]}")/$name
    fi
    echo "$found"
}

release_build() {
    local name
    for name in "$@"; do
        echo "== swift build ${release_flags[*]} --product $name" >&2
        swift build "${release_flags[@]}" --product "$name" >&2 || return 1
    done
}

require_binaries() {
    local dir=$1 name
    shift
    for name in "$@"; do
        [ -x "$dir/$name" ] || { echo "error: $dir/$name is missing; run without --no-build" >&2; exit 1; }
    done
}

is_no_build() {
    [ "$1" = --no-build ] || [ "$1" = --skip-build ]
}

cpu_seconds() {
    local stat fields
    stat=$(</proc/$$/stat)
    # After "pid (comm) " the fields start at state; cutime and cstime (clock ticks) are 13 and 14.
    read -r -a fields <<<"${stat##*) }"
    echo $(((fields[13] + fields[14]) / $(getconf CLK_TCK)))
}
