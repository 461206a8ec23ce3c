#!/usr/bin/env python3
"""Strict check of an OTLP/JSON ExportTraceServiceRequest written by `perf-report export --format otlp`.

OTLP/JSON spells trace and span ids in hex, but protobuf's json_format reads `bytes` fields as
base64: parsing the file as it is would decode the hex digits as base64 and pass wrongly. So, as
the OpenTelemetry Collector does, the ids are checked (32 or 16 lowercase hex digits, not zero),
converted to base64, and only then parsed with json_format (unknown fields rejected). The parsed
request must hold spans with sane times, one root per trace and parents that exist, and a status
the specification allows instrumentation to set: Unset (absent) on success, Error with a message
on failure, never Ok (that is for an application overriding an error).

Usage: otlp.py REQUEST.json   (needs PyPI's opentelemetry-proto and protobuf)
"""
import base64
import json
import re
import sys

from validator import Invalid, require, run

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Status

# Unix nanoseconds between 2000 and 2100.
TIME_RANGE = (946_684_800 * 10**9, 4_102_444_800 * 10**9)
ID_DIGITS = {"traceId": 32, "spanId": 16, "parentSpanId": 16}


def hex_to_base64(where, key, value, allow_empty=False):
    if allow_empty and value == "":
        return value
    digits = ID_DIGITS[key]
    require(isinstance(value, str) and re.fullmatch(f"[0-9a-f]{{{digits}}}", value),
            f"{where}.{key} {value!r} is not {digits} lowercase hex digits")
    require(value != "0" * digits, f"{where}.{key} is all zero (an invalid id)")
    return base64.b64encode(bytes.fromhex(value)).decode("ascii")


def check_strings(where, span):
    """64-bit integers are strings in OTLP/JSON; enums are integers."""
    for key in ("startTimeUnixNano", "endTimeUnixNano"):
        require(isinstance(span.get(key), str) and span[key].isdigit(), f"{where}.{key} is not a decimal string")
    require(isinstance(span.get("kind"), int), f"{where}.kind is not an integer enum")
    status = span.get("status", {})
    require(isinstance(status.get("code", 0), int), f"{where}.status.code is not an integer enum")
    for attribute in span.get("attributes", []) + [a for e in span.get("events", []) for a in e.get("attributes", [])]:
        value = attribute.get("value", {})
        if "intValue" in value:
            require(isinstance(value["intValue"], str), f"{where}: attribute {attribute.get('key')} intValue is not a string")
    for event in span.get("events", []):
        require(isinstance(event.get("timeUnixNano"), str), f"{where}: event {event.get('name')!r} timeUnixNano is not a string")


def convert(document):
    require(isinstance(document, dict) and isinstance(document.get("resourceSpans"), list), "no resourceSpans")
    for r, resource in enumerate(document["resourceSpans"]):
        for s, scope in enumerate(resource.get("scopeSpans", [])):
            for i, span in enumerate(scope.get("spans", [])):
                where = f"resourceSpans[{r}].scopeSpans[{s}].spans[{i}]"
                check_strings(where, span)
                span["traceId"] = hex_to_base64(where, "traceId", span.get("traceId"))
                span["spanId"] = hex_to_base64(where, "spanId", span.get("spanId"))
                if "parentSpanId" in span:
                    span["parentSpanId"] = hex_to_base64(where, "parentSpanId", span["parentSpanId"], allow_empty=True)
    return document


def validate(path):
    with open(path, "rb") as handle:
        try:
            document = json.load(handle)
        except json.JSONDecodeError as error:
            raise Invalid(f"not JSON: {error}")
    request = ExportTraceServiceRequest()
    try:
        json_format.Parse(json.dumps(convert(document)), request, ignore_unknown_fields=False)
    except json_format.ParseError as error:
        raise Invalid(f"json_format rejects it: {error}")

    spans = [span for rs in request.resource_spans for ss in rs.scope_spans for span in ss.spans]
    require(spans, "no spans")
    for rs in request.resource_spans:
        keys = {a.key for a in rs.resource.attributes}
        require("service.name" in keys, "a resource has no service.name")
    ids = {(span.trace_id, span.span_id) for span in spans}
    require(len(ids) == len(spans), "duplicate span ids")
    roots = {}
    for span in spans:
        name = span.name
        require(len(span.trace_id) == 16 and len(span.span_id) == 8, f"span {name!r}: ids are not 16 and 8 bytes after parsing")
        require(TIME_RANGE[0] <= span.start_time_unix_nano <= span.end_time_unix_nano <= TIME_RANGE[1],
                f"span {name!r}: times {span.start_time_unix_nano}–{span.end_time_unix_nano} are not a sane Unix-nanosecond interval")
        require(span.kind != 0, f"span {name!r}: kind unspecified")
        require(span.status.code != Status.STATUS_CODE_OK,
                f"span {name!r}: status Ok, which instrumentation must leave Unset (OpenTelemetry trace API, Set Status)")
        if span.status.code == Status.STATUS_CODE_ERROR:
            require(span.status.message, f"span {name!r}: status Error without a message")
        else:
            require(not span.status.message, f"span {name!r}: a status message without Error")
        if span.parent_span_id:
            require((span.trace_id, span.parent_span_id) in ids, f"span {name!r}: parent {span.parent_span_id.hex()} is not in its trace")
        else:
            require(span.trace_id not in roots, f"trace {span.trace_id.hex()} has two roots")
            roots[span.trace_id] = span
        for event in span.events:
            require(TIME_RANGE[0] <= event.time_unix_nano <= TIME_RANGE[1], f"span {name!r}: event {event.name!r} time is not sane")
    for span in spans:
        if span.parent_span_id:
            root = roots.get(span.trace_id)
            require(root is not None, f"span {span.name!r}: its trace has no root")
            require(root.start_time_unix_nano <= span.start_time_unix_nano and span.end_time_unix_nano <= root.end_time_unix_nano,
                    f"span {span.name!r} lies outside its session's root span")
    events = sum(len(span.events) for span in spans)
    errors = sum(1 for span in spans if span.status.code == Status.STATUS_CODE_ERROR)
    return (f"{len(request.resource_spans)} resource(s), {len(spans)} spans in {len(roots)} trace(s), {events} events, "
            f"{errors} error(s), the rest status Unset")


if __name__ == "__main__":
    sys.exit(run(validate, __doc__.strip().splitlines()[-1]))
