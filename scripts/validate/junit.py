#!/usr/bin/env python3
"""Reads `perf-report check --format junit` output with PyPI's junitparser, as a CI system's test
report reader would, and proves its counts say what the verdict file (`-o`) says: one testcase
per check that is not `unbudgeted`; a <failure> for each check that breaches (`fail`, or
`improved` under `failOnImprovement`) or leaves the data incomplete (`missing` or `insufficient`
at level error); a <skipped> for each other `missing` or `insufficient`; no <error>; and the
suite's and the root's tests/failures/errors/skipped attributes equal to those counts. A verdict
that fails or is incomplete must show at least one failure, one that passes none.

(The schema itself is xmllint's job: scripts/validate-exports.sh, scripts/validate/junit-10.xsd.)

Usage: junit.py JUNIT.xml VERDICT.json   (needs PyPI's junitparser)
"""
import json
import sys
import xml.etree.ElementTree as ElementTree

from validator import Invalid, require

from junitparser import Error, Failure, JUnitXml, Skipped, TestSuite


def expected(verdict):
    """tests, failures, skipped as the verdict file's checks imply them."""
    tests = failures = skipped = 0
    for check in verdict["checks"]:
        status, level = check["status"], check["level"]
        if status == "unbudgeted":
            continue
        tests += 1
        breaches = status == "fail" or (status == "improved" and verdict.get("failOnImprovement") is True)
        incomplete = status in ("missing", "insufficient") and level == "error"
        if breaches or incomplete:
            failures += 1
        elif status in ("missing", "insufficient"):
            skipped += 1
    return tests, failures, skipped


def attribute(where, element, name, want):
    value = element.get(name)
    require(value is not None, f"{where} has no {name} attribute")
    require(value == str(want), f"{where} {name}={value!r}, but the verdict implies {want}")


def validate(junit_path, verdict_path):
    with open(verdict_path, encoding="utf-8") as handle:
        try:
            verdict = json.load(handle)
        except json.JSONDecodeError as error:
            raise Invalid(f"{verdict_path}: not JSON: {error}")
    require(verdict.get("schema") == "perf-verdict", f"{verdict_path}: not a perf-verdict file")
    tests, failures, skipped = expected(verdict)

    try:
        xml = JUnitXml.fromfile(junit_path)
    except (ElementTree.ParseError, ValueError) as error:
        raise Invalid(f"junitparser cannot read it: {error}")
    suites = [xml] if isinstance(xml, TestSuite) else list(xml)
    require(len(suites) == 1, f"{len(suites)} test suites, expected one")
    suite = suites[0]
    counted = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for case in suite:
        counted["tests"] += 1
        results = case.result
        require(len(results) <= 1, f"testcase {case.classname} {case.name!r} has {len(results)} results")
        for result in results:
            if isinstance(result, Failure):
                counted["failures"] += 1
                require(result.message, f"testcase {case.classname} {case.name!r}: a failure without a message")
            elif isinstance(result, Skipped):
                counted["skipped"] += 1
            elif isinstance(result, Error):
                counted["errors"] += 1
    want = {"tests": tests, "failures": failures, "errors": 0, "skipped": skipped}
    require(counted == want, f"junitparser counts {counted}, the verdict implies {want}")

    # The attributes a CI system shows without reading every case.
    root = ElementTree.parse(junit_path).getroot()
    require(root.tag == "testsuites", f"the root is <{root.tag}>, not <testsuites>")
    for name in ("tests", "failures", "errors"):
        attribute("<testsuites>", root, name, want[name])
    require(root.get("skipped") is None, "<testsuites> has a skipped attribute (junit-10.xsd allows it on <testsuite> only)")
    element = root.find("testsuite")
    for name in ("tests", "failures", "errors", "skipped"):
        attribute("<testsuite>", element, name, want[name])
    require((suite.tests, suite.failures, suite.errors, suite.skipped) == (tests, failures, 0, skipped),
            f"junitparser reads the suite's attributes as tests={suite.tests} failures={suite.failures} "
            f"errors={suite.errors} skipped={suite.skipped}, the verdict implies {want}")

    outcome = verdict.get("verdict")
    if outcome in ("fail", "incomplete"):
        require(failures > 0, f"the verdict is {outcome}, but no testcase fails")
    else:
        require(failures == 0, f"the verdict is {outcome}, but {failures} testcase(s) fail")
    return f"{tests} tests, {failures} failures, {skipped} skipped, as the verdict ({outcome}, exit {verdict.get('exitCode')})"


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    try:
        print(validate(sys.argv[1], sys.argv[2]))
    except (Invalid, OSError) as error:
        print(f"{sys.argv[1]}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
