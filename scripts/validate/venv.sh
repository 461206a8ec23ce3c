# Sourced by the export validators (bash): the Python tools they need live in a virtual
# environment under .build/, never in the system's Python (Debian's refuses `pip install`,
# PEP 668). The environment is made on first use with `python3 -m venv` (Debian's python3-venv
# is installed with apt-get when the module is missing and we may), then each validator asks for
# the modules it imports.
#
#   validate_venv_require MODULE[,MODULE…] PACKAGE…
#       Makes sure the environment imports every MODULE, pip-installing the PACKAGEs into it
#       when one is missing. Returns 0 and sets validate_python to the environment's python, or
#       returns 1 with validate_reason saying why it cannot (one line, for a SKIPPED message).
#
# PERF_VALIDATE_VENV   where the environment lives (default: .build/validate-venv)
# PERF_VALIDATE_PYTHON the interpreter that makes it (default: python3)

validate_venv_dir=${PERF_VALIDATE_VENV:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.build/validate-venv}
validate_python=""
validate_reason=""

# Whether we may install Debian packages: root, with apt-get.
validate_can_apt() {
    [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1
}

# apt-get install PACKAGE…, refreshing the package lists once if the first attempt fails.
validate_apt_install() {
    validate_can_apt || return 1
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1 && return 0
    apt-get update -qq >/dev/null 2>&1 || return 1
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1
}

# Makes the environment when it is missing or broken; sets validate_reason and returns 1 if it cannot.
validate_venv_create() {
    local python=${PERF_VALIDATE_PYTHON:-python3} error
    if [ -x "$validate_venv_dir/bin/python" ] && "$validate_venv_dir/bin/python" -m pip --version >/dev/null 2>&1; then
        return 0
    fi
    if ! command -v "$python" >/dev/null 2>&1; then
        validate_reason="no Python interpreter ('$python' not found)"
        return 1
    fi
    rm -rf "$validate_venv_dir"
    mkdir -p "$(dirname "$validate_venv_dir")"
    if ! error=$("$python" -m venv "$validate_venv_dir" 2>&1); then
        rm -rf "$validate_venv_dir"
        # Debian splits venv's ensurepip into python3-venv.
        echo "validate: $python -m venv failed; installing python3-venv (apt)" >&2
        if ! validate_apt_install python3-venv; then
            validate_reason="cannot make a virtual environment: $(tail -1 <<<"$error"); python3-venv not installable"
            return 1
        fi
        if ! error=$("$python" -m venv "$validate_venv_dir" 2>&1); then
            rm -rf "$validate_venv_dir"
            validate_reason="cannot make a virtual environment even with python3-venv: $(tail -1 <<<"$error")"
            return 1
        fi
    fi
}

validate_venv_require() {
    local modules=$1 error line
    shift
    validate_python=""
    validate_reason=""
    validate_venv_create || return 1
    local python=$validate_venv_dir/bin/python
    local imports="import ${modules//,/, }"
    if ! "$python" -c "$imports" 2>/dev/null; then
        echo "validate: pip install $* (into ${validate_venv_dir#"$PWD"/})" >&2
        if ! error=$("$python" -m pip install --quiet --disable-pip-version-check "$@" 2>&1); then
            line=$(grep -E '^ERROR' <<<"$error" | tail -1)
            validate_reason="cannot pip-install $* into ${validate_venv_dir#"$PWD"/}: ${line:-$(tail -1 <<<"$error")}"
            return 1
        fi
        if ! error=$("$python" -c "$imports" 2>&1); then
            validate_reason="installed $* but '$imports' still fails: $(tail -1 <<<"$error")"
            return 1
        fi
    fi
    validate_python=$python
}
