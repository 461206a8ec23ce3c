// Children under their parents in the Chrome trace: a span whose line names its parent's scope
// is drawn inside the parent's slice, on its lane when it fits there, and joined to it by a flow
// arrow when it ran on another thread or another slice forced it onto a lane of its own.
import Perf

extension ChromeTraceEvents {
    /// A span line's children, own time and scopes as slice arguments (none for a line without).
    static func spanPartArgs(_ event: ExportInput.Event) -> [String: ReportJSON] {
        var args: [String: ReportJSON] = [:]
        args["selfMs"] = event.selfMs.map(ReportJSON.double)
        args["scope"] = event.scope.map(ReportJSON.int)
        args["parentScope"] = event.parentScope.map(ReportJSON.int)
        if !event.children.isEmpty {
            args["children"] = .array(
                event.children.map {
                    .object([
                        "name": .string($0.name), "count": .int($0.count), "totalMs": .double($0.totalMs),
                        "maxMs": .double($0.maxMs),
                    ])
                })
        }
        return args
    }

    /// Links each slice whose `parentScope` is another slice's `scope` (a ledger span's, or a
    /// flight-recorder span's from the covered line that describes it) to it, and moves a ledger
    /// child inside its parent's time: a ledger line's times are cut to the millisecond, so it can
    /// seem to start up to 1 ms before its parent. A child longer than its parent stays as it is.
    static func linkChildren(_ slices: inout [Slice]) {
        var byScope: [Int64: Int] = [:]
        for (index, slice) in slices.enumerated() {
            if let scope = slice.scopes.scope, byScope[scope] == nil { byScope[scope] = index }
        }
        guard !byScope.isEmpty else { return }
        for child in slices.indices {
            guard let scope = slices[child].scopes.parentScope, let parent = byScope[scope], parent != child else {
                continue
            }
            slices[child].parentID = slices[parent].id
            guard slices[child].slackNanos > 0 else { continue }
            let start = slices[parent].startNanos
            let end = start + slices[parent].durationNanos
            let duration = slices[child].durationNanos
            guard duration <= end - start else { continue }
            slices[child].startNanos = min(max(slices[child].startNanos, start), end - duration)
            slices[child].slackNanos = 0
        }
    }

    /// A flow arrow (`ph` `s` at the parent's start, `f` bound to the enclosing slice at the
    /// child's start) for each child drawn on another lane than its parent: another thread, or a
    /// lane another slice forced it onto.
    ///
    /// - Parameter placed: Each slice's lane (its tid) and start, by ``Slice/id``.
    mutating func addFlows(_ slices: [Slice], placed: [Int: (tid: Int64, start: Int64)], pid: Int64) {
        for slice in slices {
            guard let parentID = slice.parentID, let from = placed[parentID], let to = placed[slice.id],
                from.tid != to.tid
            else { continue }
            let id = nextFlowID
            nextFlowID += 1
            for (phase, time, tid) in [("s", from.start, from.tid), ("f", to.start, to.tid)] {
                var event: [String: ReportJSON] = [
                    "name": .string(slice.name), "cat": .string("child"), "ph": .string(phase), "id": .int(id),
                    "ts": micros(time), "pid": .int(pid), "tid": .int(tid),
                ]
                if phase == "f" { event["bp"] = .string("e") }
                timed.append(Timed(startNanos: time, durationNanos: 0, order: timed.count, json: .object(event)))
            }
        }
    }
}
