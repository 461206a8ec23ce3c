// A report as an OTLP/JSON ExportTraceServiceRequest, the body an OpenTelemetry Collector's
// OTLP/HTTP receiver accepts at POST /v1/traces: the path from one machine to a fleet.
import Perf

/// Renders a report as an OTLP/JSON `ExportTraceServiceRequest`.
///
/// One `resourceSpans` per session (resource attributes: `service.name`, `service.version`,
/// `service.instance.id` and `perf.session.id` = the session, `host.arch`, `os.type`,
/// `os.description`, `process.runtime.name`/`version`), one scope `perf`, and one trace per
/// session: a root span `session` covering the session, parent of every flight-recorder span
/// and of every slow ledger span older than the flight recorder's window, except a ledger span
/// whose `parentScope` names another exported ledger span's `scope`: that span is its parent
/// (`parentSpanId`), and its `perf.self_ms` the time outside its children. Hangs, hitches,
/// notes and overdue spans are events on the root span.
///
/// As OTLP/JSON requires: trace and span ids are lowercase hex (32 and 16 digits, derived
/// from the session id, never zero), 64-bit integers are strings (`startTimeUnixNano`,
/// `intValue`), enums are integers (`kind` 1 = internal; `status.code` 2 = error, with a
/// message, for `failure`, `expired` and `orphaned` ends and crashed sessions). Every other
/// span has no `status`, which OTLP reads as `STATUS_CODE_UNSET`: the OpenTelemetry
/// specification asks instrumentation to leave a success Unset and keep Ok for an application
/// that means to override an error. The same report always gives the same bytes and ids.
///
/// ```swift
/// let body = OTLPExport.render(try ExportInput(contentsOf: reportURL))
/// // curl -H 'Content-Type: application/json' --data-binary @trace.otlp.json http://collector:4318/v1/traces
/// ```
public enum OTLPExport {
    /// `kind`: SPAN_KIND_INTERNAL.
    static let internalKind: Int64 = 1
    /// `status.code`: STATUS_CODE_ERROR. A success is never given a status: absent means
    /// STATUS_CODE_UNSET (0), what instrumentation must leave on a span that did not fail.
    static let statusError: Int64 = 2

    /// A `status` of STATUS_CODE_ERROR with its description.
    static func errorStatus(_ message: String) -> ReportJSON {
        .object(["code": .int(statusError), "message": .string(message)])
    }

    /// The request's bytes: one JSON object, newline-terminated.
    public static func render(_ input: ExportInput) -> [UInt8] {
        let timeline = ExportTimeline(input)
        let resources = timeline.sessions.map { resourceSpans($0, input: input) }
        var bytes = ReportJSON.object(["resourceSpans": .array(resources)]).bytes
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    static func resourceSpans(_ session: ExportTimeline.Session, input: ExportInput) -> ReportJSON {
        var resource: [ReportJSON] = [
            OTLPAttribute.string("service.name", input.app.name),
            OTLPAttribute.string("service.version", input.app.version),
            OTLPAttribute.string("service.instance.id", session.id),
            OTLPAttribute.string("perf.app.build", input.app.build),
            OTLPAttribute.string("perf.session.id", session.id),
            OTLPAttribute.string("perf.session.status", session.status.rawValue),
            OTLPAttribute.string("os.type", "linux"),
            OTLPAttribute.string("process.runtime.name", "swift"),
        ]
        if let host = input.host {
            resource.append(OTLPAttribute.string("host.arch", OTLPAttribute.hostArch(host.arch)))
            resource.append(OTLPAttribute.string("os.description", host.os))
            resource.append(OTLPAttribute.string("process.runtime.version", host.swiftVersion))
            resource.append(OTLPAttribute.string("perf.build.configuration", host.buildConfiguration))
        }
        let traceID = ExportIDs.traceID(session: session.id)
        let rootID = ExportIDs.spanID(session: session.id, index: 0)
        var spans = [rootSpan(session, traceID: traceID, spanID: rootID)]
        let children = OTLPChildSpan.children(of: session)
        let parents = OTLPChildSpan.parents(of: children)
        for (index, child) in children.enumerated() {
            let parentID = parents[index].map { ExportIDs.spanID(session: session.id, index: $0 + 1) } ?? rootID
            spans.append(
                child.json(
                    traceID: traceID, spanID: ExportIDs.spanID(session: session.id, index: index + 1),
                    parentID: parentID))
        }
        return .object([
            "resource": .object(["attributes": .array(resource)]),
            "scopeSpans": .array([
                .object([
                    "scope": .object([
                        "name": .string("perf"), "version": .string(String(PerformanceReport.schemaVersion)),
                    ]),
                    "spans": .array(spans),
                ])
            ]),
        ])
    }

    static func rootSpan(_ session: ExportTimeline.Session, traceID: String, spanID: String) -> ReportJSON {
        let events = (session.hangs + session.instants)
            .sorted { lhs, rhs in
                (OTLPChildSpan.eventTime(lhs), lhs.kind.rawValue, lhs.name) < (
                    OTLPChildSpan.eventTime(rhs), rhs.kind.rawValue, rhs.name
                )
            }
            .map(OTLPChildSpan.event)
        var span: [String: ReportJSON] = [
            "traceId": .string(traceID), "spanId": .string(spanID), "name": .string("session"),
            "kind": .int(internalKind), "startTimeUnixNano": .string(String(session.startUnixNanos)),
            "endTimeUnixNano": .string(String(session.endUnixNanos)),
            "attributes": .array([
                OTLPAttribute.string("perf.session.id", session.id),
                OTLPAttribute.string("perf.session.status", session.status.rawValue),
                OTLPAttribute.int("perf.flight_recorder.spans", Int64(session.intervals.count)),
            ]),
            "events": .array(events),
        ]
        // A session that ended well leaves the status Unset; a crash is an error.
        if session.status == .crashed { span["status"] = errorStatus("the session crashed") }
        return .object(span)
    }
}

/// OTLP `KeyValue` attributes with typed `AnyValue`s.
enum OTLPAttribute {
    static func string(_ key: String, _ value: String) -> ReportJSON { attribute(key, ["stringValue": .string(value)]) }
    /// `intValue` is an int64, so a string in OTLP/JSON.
    static func int(_ key: String, _ value: Int64) -> ReportJSON {
        attribute(key, ["intValue": .string(String(value))])
    }
    static func double(_ key: String, _ value: Double) -> ReportJSON { attribute(key, ["doubleValue": .double(value)]) }
    static func bool(_ key: String, _ value: Bool) -> ReportJSON { attribute(key, ["boolValue": .bool(value)]) }

    static func attribute(_ key: String, _ value: [String: ReportJSON]) -> ReportJSON {
        .object(["key": .string(key), "value": .object(value)])
    }

    /// `host.arch` in the semantic conventions' spelling (`amd64`, `arm64`).
    static func hostArch(_ uname: String) -> String {
        switch uname {
        case "x86_64": return "amd64"
        case "aarch64", "arm64": return "arm64"
        case "i386", "i686": return "x86"
        default: return uname
        }
    }
}
