"""What every export validator shares: the failure type, `require`, and the command line
(`<validator>.py FILE`: prints a one-line summary and exits 0, or names the problem and exits 1;
2 on a usage error)."""
import sys


class Invalid(Exception):
    pass


def require(condition, message):
    if not condition:
        raise Invalid(message)


def run(validate, usage):
    if len(sys.argv) != 2:
        print(usage, file=sys.stderr)
        return 2
    try:
        print(validate(sys.argv[1]))
    except (Invalid, OSError) as error:
        print(f"{sys.argv[1]}: {error}", file=sys.stderr)
        return 1
    return 0
