# Sourced by the validators (bash): Debian packages fetched with `apt-get download` and unpacked
# with `dpkg-deb -x` under a tools directory, never installed and no service started, so a second
# run fetches nothing.
#
#   validate_debian_unpack TOOLS PACKAGE…
#       Downloads the PACKAGEs into TOOLS/debs (refreshing the package lists once if the first
#       attempt fails) and unpacks every .deb there into TOOLS/root. Returns 0, or 1 with
#       validate_reason saying why not (one line, for a SKIPPED message).

validate_reason=${validate_reason:-}

validate_debian_unpack() {
    local tools=$1 deb
    shift
    mkdir -p "$tools/debs" "$tools/root"
    if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-deb >/dev/null 2>&1; then
        validate_reason="apt-get and dpkg-deb are not available to download $*"
        return 1
    fi
    if ! (cd "$tools/debs" && { apt-get download "$@" >/dev/null 2>&1 \
        || { apt-get update >/dev/null 2>&1 && apt-get download "$@" >/dev/null 2>&1; }; }); then
        validate_reason="cannot download the Debian packages $*"
        return 1
    fi
    for deb in "$tools"/debs/*.deb; do dpkg-deb -x "$deb" "$tools/root"; done
}
