#!/usr/bin/env bash
# Renders an html export in headless Chromium from file:// and fails when the page is blank,
# logs anything to the console, tries to load anything besides itself, holds script, or is not
# valid HTML5 (html5lib's strict parser).
#
# Usage: scripts/validate/html.sh PAGE.html [SCREENSHOT.png]
#        scripts/validate/html.sh --self-test    (proves each check catches a broken page)
#
# Installs Debian's chromium (about 125 MB download, 415 MB on disk, ~25 s here) when it is
# missing, and PyPI's pillow and html5lib into .build/validate-venv (scripts/validate/venv.sh).
# Exit 0 and "PASS <screenshot>" when the page is good, 1 and FAIL lines when it is not, 77 and
# "SKIPPED html: <reason>" when the tools cannot be had or Chromium cannot render here.
# PERF_VALIDATE_CHROMIUM names the browser binary (default: chromium).
set -euo pipefail

log() { echo "html.sh: $*" >&2; }
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=scripts/validate/venv.sh
source "$(dirname "$0")/venv.sh"
chromium=${PERF_VALIDATE_CHROMIUM:-chromium}

# The tools cannot be had here: one SKIPPED line, exit 77.
skip_all() { skip html "$1"; exit 77; }

ensure_tools() {
    if ! command -v "$chromium" >/dev/null 2>&1; then
        [ "$chromium" = chromium ] || skip_all "no browser at '$chromium' (PERF_VALIDATE_CHROMIUM)"
        validate_can_apt || skip_all "chromium is not installed and apt-get is not available to root here"
        log "installing chromium (apt)"
        local start=$SECONDS
        validate_apt_install chromium || skip_all "chromium is not installed and apt-get cannot install it"
        log "chromium installed in $((SECONDS - start)) s"
    fi
    # A browser that cannot start here (no shared libraries, no /dev/shm…) is a tool problem,
    # not a page problem: prove it renders an empty page before judging ours.
    local probe profile status=0
    profile=$(mktemp -d /tmp/perf-html-probe.XXXXXX)
    probe=$(timeout 60 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run \
        --user-data-dir="$profile" --dump-dom about:blank 2>&1) || status=$?
    rm -rf "$profile"
    if [ $status -ne 0 ] || ! grep -q '<html' <<<"$probe"; then
        local last
        last=$(tail -1 <<<"$probe")
        skip_all "$chromium cannot render an empty page here (exit $status)${last:+: $last}"
    fi
    validate_venv_require PIL,html5lib pillow html5lib || skip_all "$validate_reason"
}

# check PAGE SCREENSHOT: prints PASS or the reasons it fails; returns 0 on PASS.
check() {
    local page screenshot work
    page=$(realpath "$1")
    screenshot=$2
    work=$(mktemp -d /tmp/perf-html-check.XXXXXX)
    local problems=()

    # (c1) Static: the page must name nothing outside itself and hold no script. The exporter
    # escapes ':', '(', '=' and '@' in report text, so these never appear by accident in a name.
    local outside='(https?|ftp|file|data)://|javascript:|url\(|@import|<(link|img|iframe|object|embed|base)\b|\b(src|href|srcset|action)='
    if grep -Eiq "$outside" "$page"; then
        problems+=("page references something outside itself: $(grep -Eio "$outside" "$page" | sort -u | head -5 | tr '\n' ' ')")
    fi
    local script='<script\b|\bon[a-z]+='
    if grep -Eiq "$script" "$page"; then
        problems+=("page holds script: $(grep -Eio "$script" "$page" | sort -u | head -5 | tr '\n' ' ')")
    fi

    # Render: no DNS (every host maps to nothing), a NetLog of every request, console on stderr.
    # Background services that would fetch on their own are switched off; the NetLog check
    # below still only counts requests made on behalf of the file:// page.
    if ! timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --window-size=1400,1800 --no-first-run --disable-background-networking --disable-component-update \
        --disable-sync --disable-default-apps --disable-extensions --user-data-dir="$work/profile" \
        --host-resolver-rules="MAP * ~NOTFOUND" --log-net-log="$work/net.json" \
        --enable-logging=stderr --v=0 --screenshot="$screenshot" "file://$page" \
        >"$work/stdout" 2>"$work/stderr"; then
        problems+=("chromium failed: $(tail -3 "$work/stderr" | tr '\n' ' ')")
    fi

    # (b) Console: any message at all, uncaught errors included (the page has no script, so
    # anything Chromium writes to the page's console is a defect: CSP, parse or load errors).
    if grep -E ':CONSOLE[:(]|Uncaught' "$work/stderr" >"$work/console"; then
        problems+=("console: $(head -3 "$work/console" | sed 's/^.*CONSOLE[^]]*\] //' | tr '\n' ' ')")
    fi

    # (a) Blank: too few pixels differ from the background. (c2) Network: requests the page
    # made. (d) Valid HTML5: html5lib's strict parser reports any parse error.
    local verdict
    verdict=$("$validate_python" - "$screenshot" "$work/net.json" "$page" <<'PY'
import collections, json, sys
import html5lib
from PIL import Image

problems = []
try:
    image = Image.open(sys.argv[1]).convert("RGB")
    width, height = image.size
    data = image.tobytes()
    # Every 7th pixel is plenty to tell a page from an empty one.
    pixels = [data[i:i + 3] for i in range(0, len(data), 3 * 7)]
    background, _ = collections.Counter(pixels).most_common(1)[0]
    fraction = sum(1 for pixel in pixels if pixel != background) / len(pixels)
    colours = len(set(pixels))
    print(f"info {width}x{height}, {fraction:.1%} non-background pixels, {colours} colours")
    if fraction < 0.02 or colours < 8:
        problems.append(f"screenshot is blank ({fraction:.2%} non-background pixels, {colours} colours)")
except Exception as error:  # a missing or broken PNG is a failure, not a crash
    problems.append(f"no readable screenshot: {error}")

try:
    with open(sys.argv[2]) as file:
        text = file.read()
    # Chromium may stop before closing the events array.
    if not text.rstrip().endswith("}"):
        text = text.rstrip().rstrip(",") + "]}"
    log = json.loads(text)
    names = {value: key for key, value in log["constants"]["logEventTypes"].items()}
    for event in log.get("events", []):
        params = event.get("params", {})
        if names.get(event.get("type")) == "URL_REQUEST_START_JOB" and "file:" in params.get("network_isolation_key", ""):
            problems.append(f"page requested {params.get('url')}")
except Exception as error:
    problems.append(f"no readable NetLog: {error}")
parser = html5lib.HTMLParser(strict=True, namespaceHTMLElements=False)
try:
    with open(sys.argv[3], "rb") as file:
        parser.parse(file.read())
except Exception as error:
    problems.append(f"not valid HTML5: {error}")

for problem in problems:
    print("problem " + problem)
PY
    )
    while IFS= read -r line; do
        case "$line" in
            info\ *) log "${line#info }" ;;
            problem\ *) problems+=("${line#problem }") ;;
        esac
    done <<<"$verdict"
    rm -rf "$work"

    if [ ${#problems[@]} -eq 0 ]; then
        echo "PASS $screenshot"
        return 0
    fi
    for problem in "${problems[@]}"; do echo "FAIL $page: $problem"; done
    return 1
}

# Each broken page must fail, for the reason it was built to show; a plain good page must pass.
self_test() {
    local dir
    dir=$(mktemp -d /tmp/perf-html-selftest.XXXXXX)
    local head='<!doctype html><html lang="en"><head><meta charset="utf-8"><title>t</title></head><body>'
    local body='<h1>Self test</h1><p style="color:#345">'
    body+=$(printf 'Line of text %d with some words in it.<br>' $(seq 1 60))
    body+='</p><svg width="600" height="200"><rect x="10" y="10" width="500" height="150" fill="#4c7bd9"/></svg>'
    printf '%s%s</body></html>' "$head" "$body" >"$dir/good.html"
    printf '%s</body></html>' "$head" >"$dir/blank.html"
    printf '%s%s</table></div></body></html>' "$head" "$body" >"$dir/invalid.html"
    printf '%s%s<script>throw new Error("deliberate")</script></body></html>' "$head" "$body" >"$dir/script.html"
    # A console error with no script and no load, that only the console check can see: the
    # page's own policy forbids its inline style.
    printf '%s%s<style>p{color:red}</style></body></html>' \
        "${head/<title>/<meta http-equiv=\"Content-Security-Policy\" content=\"style-src 'none'\"><title>}" \
        "$body" >"$dir/console.html"
    printf '%s%s<svg><image href="http://example.invalid/x.png" width="9" height="9"/></svg></body></html>' \
        "$head" "$body" >"$dir/network-static.html"
    # A load the static grep cannot see, which only the NetLog catches: a CSS escape spells
    # url( and a character reference the colon, both decoded by the browser.
    printf '%s%s<div style="width:9px;height:9px;background:u\\72 l(%s)"></div></body></html>' \
        "$head" "$body" "'http&#58;//example.invalid/y.png'" >"$dir/network.html"

    local failed=0
    # expect NAME pass|fail [REASON…]: every REASON (a grep pattern) must be in the failure.
    expect() {
        local name=$1 want=$2 output status=0 missing=""
        shift 2
        output=$(check "$dir/$name.html" "$dir/$name.png" 2>/dev/null) || status=$?
        for reason in "$@"; do grep -q -- "$reason" <<<"$output" || missing+=" '$reason'"; done
        if [ "$want" = pass ] && [ $status -eq 0 ]; then
            echo "self-test $name: passes, as it should"
        elif [ "$want" = fail ] && [ $status -ne 0 ] && [ -z "$missing" ]; then
            echo "self-test $name: fails, as it should:"
            sed 's/^/    /' <<<"$output" | cut -c1-160
        else
            echo "self-test $name: WRONG (wanted $want; reasons not found:${missing:- none}): $output"
            failed=1
        fi
    }
    expect good pass ""
    expect blank fail "screenshot is blank"
    expect script fail "console: .*Uncaught Error: deliberate" "page holds script"
    expect console fail "console: .*Content Security Policy"
    expect invalid fail "not valid HTML5"
    expect network-static fail "outside itself"
    expect network fail "page requested http://example.invalid/y.png"
    rm -rf "$dir"
    [ $failed -eq 0 ] && echo "PASS self-test: every check catches the page built to break it"
    return $failed
}

case "${1:-}" in
    --self-test)
        ensure_tools
        self_test
        ;;
    "" | -h | --help)
        sed -n '2,/^set /{/^#/p}' "$0" | sed 's/^# \{0,1\}//'
        [ -n "${1:-}" ] || exit 2
        ;;
    *)
        [ -f "$1" ] || { log "no such page: $1"; exit 2; }
        ensure_tools
        check "$1" "${2:-${1%.html}.png}"
        ;;
esac
