// Children under their parents in the Chrome trace: a slow ledger span whose line names its
// parent's scope is drawn inside the parent's slice, on its lane when it fits there, and joined
// to it by a flow arrow when another slice forced it onto a lane of its own.
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

    /// Links each ledger slice whose `parentScope` is another ledger slice's `scope` to it, and
    /// moves it inside the parent's time: both times are cut to the millisecond, so a child can
    /// seem to start up to 1 ms before its parent. A child longer than its parent stays as it is.
    ///
    /// - Parameter ledgerSpans: The session's ledger spans, in the order their slices were made
    ///   (after the interval slices, so slice `offset + i` is ledger span `i`).
    static func linkChildren(_ slices: inout [Slice], ledgerSpans: [ExportInput.Event]) {
        guard let offset = slices.firstIndex(where: { $0.category == "ledger" }) else { return }
        var byScope: [Int64: Int] = [:]
        for (index, event) in ledgerSpans.enumerated() {
            if let scope = event.scope, byScope[scope] == nil { byScope[scope] = offset + index }
        }
        for (index, event) in ledgerSpans.enumerated() {
            let child = offset + index
            guard let scope = event.parentScope, let parent = byScope[scope], parent != child else { continue }
            slices[child].parentID = parent
            let start = slices[parent].startNanos
            let end = start + slices[parent].durationNanos
            let duration = slices[child].durationNanos
            guard duration <= end - start else { continue }
            slices[child].startNanos = min(max(slices[child].startNanos, start), end - duration)
            slices[child].slackNanos = 0
        }
    }

    /// A flow arrow (`ph` `s` at the parent's start, `f` bound to the enclosing slice at the
    /// child's start) for each child placed on another lane than its parent.
    mutating func addFlows(
        _ ordered: [Slice], _ placements: [ChromeTraceLanes.Placement], tids: [Int64], pid: Int64
    ) {
        var position: [Int: Int] = [:]
        for (index, slice) in ordered.enumerated() { position[slice.id] = index }
        for (index, slice) in ordered.enumerated() {
            guard let parent = slice.parentID.flatMap({ position[$0] }) else { continue }
            let from = placements[parent]
            let to = placements[index]
            guard from.lane != to.lane else { continue }
            let id = nextFlowID
            nextFlowID += 1
            for (phase, time, lane) in [("s", from.start, from.lane), ("f", to.start, to.lane)] {
                var event: [String: ReportJSON] = [
                    "name": .string(slice.name), "cat": .string("child"), "ph": .string(phase), "id": .int(id),
                    "ts": micros(time), "pid": .int(pid), "tid": .int(tids[lane]),
                ]
                if phase == "f" { event["bp"] = .string("e") }
                timed.append(Timed(startNanos: time, durationNanos: 0, order: timed.count, json: .object(event)))
            }
        }
    }
}
