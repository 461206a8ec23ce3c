#!/usr/bin/env python3
"""Structural checks of a Chrome Trace Event file written by `perf-report export --format chrome`.

Perfetto's trace processor cannot be installed offline, so this checks what the viewers rely on:
the JSON object form, required fields per phase, the phases we write, metadata naming every
process and lane, events sorted by ts after the metadata, complete events that nest on each lane,
microsecond units, and flow arrows (parent to child on another lane) whose two ends pair up and
each lie inside a complete event of its lane, which is what the viewers bind them to.

Usage: chrome_trace.py TRACE.json   (exit 0 and one summary line, or exit 1 naming the problem)
"""
import json
import re
import sys

from validator import Invalid, require, run

ALLOWED_PHASES = {"X", "i", "C", "M", "s", "f"}
METADATA_NAMES = {"process_name", "process_sort_index", "thread_name", "thread_sort_index"}
# A trace of one report spans minutes to days, never years: ts and dur are microseconds.
MAX_SPAN_MICROS = 30 * 24 * 3600 * 1e6
# Unix nanoseconds between 2000 and 2100.
ORIGIN_RANGE = (946_684_800 * 10**9, 4_102_444_800 * 10**9)


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_event(index, event):
    where = f"traceEvents[{index}]"
    require(isinstance(event, dict), f"{where} is not an object")
    for key, kind in (("name", str), ("ph", str)):
        require(isinstance(event.get(key), kind), f"{where} has no string '{key}'")
    for key in ("pid", "tid"):
        require(isinstance(event.get(key), int) and not isinstance(event.get(key), bool), f"{where} has no integer '{key}'")
    require(is_number(event.get("ts")), f"{where} has no numeric 'ts'")
    require(event["ts"] >= 0, f"{where} has a negative ts {event['ts']}")
    phase = event["ph"]
    require(phase in ALLOWED_PHASES, f"{where} has phase {phase!r}, not one of {sorted(ALLOWED_PHASES)}")
    if phase == "X":
        require(is_number(event.get("dur")), f"{where} (X) has no numeric 'dur'")
        require(event["dur"] >= 0, f"{where} (X) has a negative dur {event['dur']}")
        require(isinstance(event.get("cat"), str), f"{where} (X) has no 'cat'")
        require(event["ts"] + event["dur"] <= MAX_SPAN_MICROS, f"{where} ends {event['ts'] + event['dur']} µs after the origin: not microseconds?")
    elif phase == "i":
        require(event.get("s") in ("t", "p", "g"), f"{where} (instant) has scope {event.get('s')!r}, not t, p or g")
    elif phase == "C":
        args = event.get("args")
        require(isinstance(args, dict) and args, f"{where} (counter) has no args")
        require(all(is_number(v) for v in args.values()), f"{where} (counter) has a non-numeric series")
    elif phase in ("s", "f"):
        require(isinstance(event.get("id"), int) and not isinstance(event.get("id"), bool), f"{where} (flow) has no integer id")
        require(isinstance(event.get("cat"), str), f"{where} (flow) has no 'cat'")
        if phase == "f":
            require(event.get("bp") == "e", f"{where} (flow end) does not bind to its enclosing slice (bp 'e')")
    elif phase == "M":
        require(event["name"] in METADATA_NAMES, f"{where} is metadata {event['name']!r}")
        require(isinstance(event.get("args"), dict), f"{where} (metadata) has no args")
    if "args" in event:
        require(isinstance(event["args"], dict), f"{where} has non-object args")


def check_nesting(slices):
    """Complete events on one (pid, tid) must nest: viewers drop or misdraw partial overlaps.

    Compared in integer nanoseconds, as Perfetto's importer converts them, so float rounding of
    ts + dur cannot make touching slices overlap."""
    for (pid, tid), events in slices.items():
        events.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for event in events:
            start = round(event["ts"] * 1000)
            end = start + round(event["dur"] * 1000)
            while stack and stack[-1][1] <= start:
                stack.pop()
            if stack:
                require(end <= stack[-1][1],
                        f"pid {pid} tid {tid}: {event['name']!r} at {start} ns overlaps "
                        f"{stack[-1][2]!r} ({stack[-1][0]}–{stack[-1][1]} ns) without nesting")
            stack.append((start, end, event["name"]))


def check_flows(flows, slices):
    """Each flow id has one start and one end, the end not before the start, and each lies inside
    a complete event on its own lane."""
    by_id = {}
    for event in flows:
        by_id.setdefault(event["id"], []).append(event)
    for flow_id, events in by_id.items():
        phases = sorted(event["ph"] for event in events)
        require(phases == ["f", "s"], f"flow {flow_id} has phases {phases}, not one s and one f")
        start = next(event for event in events if event["ph"] == "s")
        end = next(event for event in events if event["ph"] == "f")
        require(end["ts"] >= start["ts"], f"flow {flow_id} ends at {end['ts']} before it starts at {start['ts']}")
        for event in events:
            lane = slices.get((event["pid"], event["tid"]), [])
            inside = any(s["ts"] <= event["ts"] <= s["ts"] + s["dur"] for s in lane)
            require(inside, f"flow {flow_id} ({event['ph']}) at {event['ts']} lies in no slice of pid {event['pid']} tid {event['tid']}")


def validate(path):
    with open(path, "rb") as handle:
        try:
            document = json.load(handle)
        except json.JSONDecodeError as error:
            raise Invalid(f"not JSON: {error}")
    require(isinstance(document, dict), "not the JSON object form ({\"traceEvents\": …})")
    events = document.get("traceEvents")
    require(isinstance(events, list) and events, "no traceEvents")
    require(document.get("displayTimeUnit") in ("ms", "ns"), "displayTimeUnit is not ms or ns")
    other = document.get("otherData")
    require(isinstance(other, dict), "no otherData")
    origin = other.get("originUnixNanos")
    require(isinstance(origin, str) and re.fullmatch(r"[0-9]+", origin), "otherData.originUnixNanos is not a decimal string")
    require(ORIGIN_RANGE[0] <= int(origin) <= ORIGIN_RANGE[1], f"originUnixNanos {origin} is not a time between 2000 and 2100")

    seen_timed = False
    last_ts = 0
    process_names, thread_names = set(), set()
    slices = {}
    flows = []
    counts = {phase: 0 for phase in ALLOWED_PHASES}
    for index, event in enumerate(events):
        check_event(index, event)
        phase = event["ph"]
        counts[phase] += 1
        if phase == "M":
            require(not seen_timed, f"traceEvents[{index}]: metadata after timed events (metadata comes first)")
            if event["name"] == "process_name":
                process_names.add(event["pid"])
            if event["name"] == "thread_name":
                thread_names.add((event["pid"], event["tid"]))
            continue
        seen_timed = True
        require(event["ts"] >= last_ts, f"traceEvents[{index}]: ts {event['ts']} before the previous event's {last_ts} (not sorted)")
        last_ts = event["ts"]
        if phase == "X":
            slices.setdefault((event["pid"], event["tid"]), []).append(event)
        if phase in ("s", "f"):
            flows.append(event)

    require(counts["X"] > 0, "no complete (X) events: nothing to draw")
    pids = {event["pid"] for event in events}
    require(pids <= process_names, f"processes without process_name metadata: {sorted(pids - process_names)}")
    require(set(slices) <= thread_names, f"lanes without thread_name metadata: {sorted(set(slices) - thread_names)}")
    check_nesting(slices)
    check_flows(flows, slices)
    return f"{len(events)} events ({counts['X']} complete, {counts['i']} instant, {counts['C']} counter, {counts['M']} metadata, {counts['s']} flow(s)), {len(pids)} process(es), {len(slices)} lane(s)"


if __name__ == "__main__":
    sys.exit(run(validate, __doc__.strip().splitlines()[-1]))
