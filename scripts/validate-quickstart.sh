#!/usr/bin/env bash
# Pastes README.md's quick start into a fresh package, as a newcomer would, and runs it: the
# README's Package.swift (its path dependency pointed at this checkout, under the checkout
# folder's name, which is the dependency's identity), and its code once as main.swift top-level
# code and once inside a function. Each must build, run to exit 0, print the data directory and
# leave the quick start's `socket.session` span in that directory's ledger.
#
# One scratch package serves both variants, so Perf is compiled once (debug, a few minutes); the
# second variant only recompiles its one file. Needs nothing but the toolchain and no network.
# Prints a PASS or FAIL line per check; exits 1 if any failed.
#
#   scripts/validate-quickstart.sh [--keep]    --keep leaves the scratch package for a look
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
keep=false
if [ "${1:-}" = --keep ]; then keep=true; fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/perf-quickstart.XXXXXX")
if $keep; then echo "scratch package: $scratch/myservice"; else trap 'rm -rf "$scratch"' EXIT; fi
failures=0
pass() { echo "PASS $1"; }
fail() {
    echo "FAIL $1"
    failures=$((failures + 1))
}

# The fenced blocks of the README's "## Quick start" section (up to the next heading), each into
# its own file $scratch/block-<n>.<info string>.
awk -v out="$scratch/block-" '
    /^## Quick start$/ { inside = 1; next }
    !inside { next }
    !open && /^#/ { exit }
    !open && /^```/ {
        n++; open = 1; info = substr($0, 4)
        file = out n "." (info == "" ? "text" : info); printf "" > file; next
    }
    open && /^```$/ { close(file); open = 0; next }
    open { print > file }
' "$root/README.md"

manifest=$(grep -l '^import PackageDescription$' "$scratch"/block-*.swift 2>/dev/null | head -1 || true)
program=$(grep -l '^import Perf$' "$scratch"/block-*.swift 2>/dev/null | head -1 || true)
if [ -z "$manifest" ] || [ -z "$program" ]; then
    fail "README's Quick start shows a whole Package.swift and a program that imports Perf"
    exit 1
fi
pass "README's Quick start shows a whole Package.swift and a program that imports Perf"

# The README's manifest must be right as written: its product's `package:` is the identity of its
# path dependency, the path's last component.
readme_path=$(sed -n 's/^ *\.package(path: "\([^"]*\)").*/\1/p' "$manifest" | head -1)
readme_identity=$(sed -n 's/^ *\.product(name: "Perf", package: "\([^"]*\)").*/\1/p' "$manifest" | head -1)
target=$(sed -n 's/^ *\.executableTarget(name: "\([^"]*\)".*/\1/p' "$manifest" | head -1)
if [ -n "$readme_path" ] && [ -n "$target" ] && [ "$readme_identity" = "$(basename "$readme_path")" ]; then
    pass "README's .product(package: \"$readme_identity\") is its .package(path: \"$readme_path\")'s identity"
else
    fail "README's manifest: path '$readme_path', product package '$readme_identity', target '$target'"
    exit 1
fi

# The same manifest with the path pointed at this checkout, whose identity is its folder's name
# (a CI clone's folder may be called anything).
identity=$(basename "$root")
package="$scratch/myservice"
sources="$package/Sources/$target"
mkdir -p "$sources"
escaped_root=$(printf '%s' "$root" | sed 's/[\\&|]/\\&/g')
path_pattern=$(printf '%s' "$readme_path" | sed 's/[][\.*^$|]/\\&/g')
sed -e "s|\.package(path: \"$path_pattern\")|.package(path: \"$escaped_root\")|" \
    -e "s|package: \"$readme_identity\")|package: \"$identity\")|" "$manifest" >"$package/Package.swift"

# Variant one: the program as main.swift. Variant two: its declarations and statements inside a
# function (`@main`'s static main), its imports above.
main_swift=$(cat "$program")
in_function=$(
    grep '^import ' "$program"
    printf '\n@main\nstruct QuickStart {\n    static func main() {\n'
    grep -v '^import ' "$program" | sed 's/^./        &/'
    printf '    }\n}\n'
)

# Builds and runs the package with `source` as its only file; checks the run.
run_variant() {
    local name=$1 file=$2 source=$3
    rm -f "$sources"/*.swift
    printf '%s\n' "$source" >"$sources/$file"
    local data="$scratch/data-$name"
    local started
    started=$(date +%s)
    if ! (cd "$package" && swift build --product "$target") >"$scratch/build-$name.log" 2>&1; then
        fail "$name: swift build ($(($(date +%s) - started)) s); its errors:"
        # The errors with their source excerpts, not the progress lines around them.
        grep -v '^\[[0-9]*/[0-9]*\] ' "$scratch/build-$name.log" | sed 's/^/    /' | head -60
        return
    fi
    pass "$name: swift build ($(($(date +%s) - started)) s)"
    local status=0
    (cd "$package" && env -u PERF_RECORDING PERF_DIR="$data" swift run --skip-build "$target") \
        >"$scratch/run-$name.log" 2>&1 || status=$?
    if [ "$status" -eq 0 ]; then pass "$name: swift run exits 0"; else fail "$name: swift run exits $status"; fi
    if grep -qF "Perf writes to $data" "$scratch/run-$name.log"; then
        pass "$name: prints its data directory"
    else
        fail "$name: prints its data directory ($data); it printed:"
        sed 's/^/    /' "$scratch/run-$name.log" | tail -20
    fi
    if grep -qF '"socket.session"' "$data/perf-events.jsonl" 2>/dev/null; then
        pass "$name: perf-events.jsonl holds the socket.session span"
    else
        fail "$name: perf-events.jsonl holds the socket.session span (in $data)"
    fi
}

run_variant "main.swift top-level code" main.swift "$main_swift"
run_variant "inside a function" QuickStart.swift "$in_function"

if [ "$failures" -gt 0 ]; then
    echo "FAIL: $failures check(s) of README.md's quick start failed"
    exit 1
fi
echo "PASS: README.md's quick start builds and runs as main.swift and inside a function"
