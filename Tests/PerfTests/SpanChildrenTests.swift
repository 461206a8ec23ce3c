// A parent span's over-budget line lists the spans that began and ended inside it: through
// Perf.measure's body (a thread-local, a task-local for the async form), or explicitly through
// span.child. Nesting is never guessed from the thread.
import CPerfShims
import Foundation
import PerfCore
import PerfTestSupport
import Testing

@testable import Perf

extension PerfGlobalStateTests {
    @Suite struct SpanChildrenTests {
        /// Installs with a manual clock, runs `body`, shuts down and returns the span lines by name.
        private func recorded(
            _ body: (ManualClock) async throws -> Void
        ) async throws -> [String: [[String: Any]]] {
            let directory = try TemporaryDirectory("span-children")
            defer { directory.remove() }
            let clock = ManualClock()
            let configuration = Perf.Configuration(
                directory: directory.url, app: Perf.AppInfo(name: "children-test"), recording: .enabled)
            Perf.shutdown()
            #expect(Perf.install(configuration, environment: [:], clock: clock, report: { _ in }))
            try await body(clock)
            Perf.shutdown()
            let text = try String(
                contentsOf: directory.url.appendingPathComponent(LedgerWriter.fileName), encoding: .utf8)
            var lines: [String: [[String: Any]]] = [:]
            for line in text.split(separator: "\n") {
                guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    object["kind"] as? String == "span", let name = object["name"] as? String
                else { continue }
                lines[name, default: []].append(object)
            }
            return lines
        }

        /// The `children` entry of `name` in a line, as (count, totalMs, maxMs).
        private func child(_ line: [String: Any]?, _ name: String) -> (count: Int, totalMs: Double, maxMs: Double)? {
            guard let children = line?["children"] as? [[String: Any]],
                let entry = children.first(where: { $0["name"] as? String == name })
            else { return nil }
            return (
                (entry["count"] as? NSNumber)?.intValue ?? -1, (entry["totalMs"] as? NSNumber)?.doubleValue ?? -1,
                (entry["maxMs"] as? NSNumber)?.doubleValue ?? -1
            )
        }

        private func names(_ line: [String: Any]?) -> Set<String> {
            Set((line?["children"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String })
        }

        @Test func synchronousMeasureNestedThreeDeepCountsItsDirectChildrenExactly() async throws {
            let lines = try await recorded { clock in
                Perf.measure("outer", slowMs: 0) {
                    clock.advance(byMilliseconds: 1)
                    for step in 1...2 {
                        Perf.measure("middle", slowMs: 0) {
                            clock.advance(byMilliseconds: UInt64(2 * step))
                            Perf.measure("inner", slowMs: 60_000) { clock.advance(byMilliseconds: 3) }
                            let leaf = Perf.begin("leaf", slowMs: 60_000)
                            clock.advance(byMilliseconds: 4)
                            leaf.end()
                        }
                    }
                }
                // A span after the measure returned is a root: no parent scope is left behind.
                Perf.begin("after", slowMs: 0).end()
            }
            let outer = lines["outer"]?.first
            // middle: 2+3+4 = 9 ms, then 4+3+4 = 11 ms.
            #expect(child(outer, "middle")?.count == 2)
            #expect(child(outer, "middle")?.totalMs == 20)
            #expect(child(outer, "middle")?.maxMs == 11)
            #expect(names(outer) == ["middle"], "grandchildren fold into their child")
            #expect((outer?["durationMs"] as? NSNumber)?.doubleValue == 21)
            #expect((outer?["selfMs"] as? NSNumber)?.doubleValue == 1)
            let middles = lines["middle"] ?? []
            #expect(middles.count == 2)
            for middle in middles {
                #expect(child(middle, "inner")?.count == 1)
                #expect(child(middle, "inner")?.totalMs == 3)
                #expect(child(middle, "leaf")?.totalMs == 4)
            }
            #expect(lines["after"]?.first?["children"] == nil)
            #expect(perf_scope_get() == 0)
        }

        @Test func aChildLineNamesItsParentsScopeAndOnlyAParentWithChildrenHasOne() async throws {
            let lines = try await recorded { clock in
                Perf.measure("outer", slowMs: 0) {
                    Perf.measure("middle", slowMs: 0) {
                        let leaf = Perf.begin("leaf", slowMs: 0)
                        clock.advance(byMilliseconds: 1)
                        leaf.end()
                    }
                    Perf.measure("childless", slowMs: 0) { clock.advance(byMilliseconds: 1) }
                }
                Perf.begin("root", slowMs: 0).end()
            }
            func int(_ line: [String: Any]?, _ key: String) -> Int64? { (line?[key] as? NSNumber)?.int64Value }
            let outer = lines["outer"]?.first
            let middle = lines["middle"]?.first
            let outerScope = try #require(int(outer, "scope"))
            let middleScope = try #require(int(middle, "scope"))
            #expect(outerScope != middleScope)
            #expect(int(middle, "parentScope") == outerScope)
            #expect(int(lines["childless"]?.first, "parentScope") == outerScope)
            #expect(int(lines["childless"]?.first, "scope") == nil, "no children, no scope")
            #expect(int(lines["leaf"]?.first, "parentScope") == middleScope)
            #expect(int(outer, "parentScope") == nil)
            #expect(int(lines["root"]?.first, "parentScope") == nil && int(lines["root"]?.first, "scope") == nil)
        }

        @Test func asynchronousMeasureCountsAwaitsAsyncLetAndATaskGroup() async throws {
            let lines = try await recorded { clock in
                try await Perf.measure("request", slowMs: 0) {
                    await Task.yield()
                    let first = Perf.begin("before.await", slowMs: 60_000)
                    clock.advance(byMilliseconds: 2)
                    await Task.yield()
                    first.end()
                    async let side: Void = Perf.measure("async.let", slowMs: 60_000) {
                        clock.advance(byMilliseconds: 1)
                    }
                    await side
                    await withTaskGroup(of: Void.self) { group in
                        for _ in 0..<3 {
                            group.addTask { Perf.begin("grouped", slowMs: 60_000).end() }
                        }
                    }
                    try Task.checkCancellation()
                }
            }
            let request = lines["request"]?.first
            #expect(child(request, "before.await")?.count == 1)
            #expect(child(request, "before.await")?.totalMs == 2)
            #expect(child(request, "async.let")?.count == 1)
            #expect(child(request, "grouped")?.count == 3)
            #expect(names(request) == ["before.await", "async.let", "grouped"])
        }

        /// Two tasks on one actor interleave at every await: each parent gets its own children only.
        actor Interleaver {
            let clock: ManualClock
            init(clock: ManualClock) { self.clock = clock }

            func run(_ first: Bool) async {
                if first {
                    await Perf.measure("parent.a", slowMs: 0) {
                        for _ in 0..<50 {
                            let span = Perf.begin("child.a", slowMs: 60_000)
                            await Task.yield()
                            span.end()
                        }
                        clock.advance(byMilliseconds: 1)
                    }
                } else {
                    await Perf.measure("parent.b", slowMs: 0) {
                        for _ in 0..<50 {
                            let span = Perf.begin("child.b", slowMs: 60_000)
                            await Task.yield()
                            span.end()
                        }
                        clock.advance(byMilliseconds: 1)
                    }
                }
            }
        }

        @Test func interleavedTasksAndInterleavedCallbacksNeverShareAParent() async throws {
            let lines = try await recorded { clock in
                let actor = Interleaver(clock: clock)
                async let a: Void = actor.run(true)
                async let b: Void = actor.run(false)
                _ = await (a, b)
                // Two requests interleaving on one serial queue: bare spans are roots, explicit
                // children go to the span they were made from.
                let queue = DispatchQueue(label: "interleave")
                let requests = RequestPair()
                queue.sync {
                    requests.first = Perf.begin("request.one", slowMs: 0)
                    requests.second = Perf.begin("request.two", slowMs: 0)
                }
                for round in 0..<20 {
                    queue.sync {
                        let one = requests.first?.child("one.step", slowMs: 60_000)
                        let bare = Perf.begin("bare.step", slowMs: 60_000)
                        let two = requests.second?.child("two.step", slowMs: 60_000)
                        if round % 2 == 0 {
                            one?.end()
                            two?.end()
                        } else {
                            two?.end()
                            one?.end()
                        }
                        bare.end()
                    }
                }
                queue.sync {
                    clock.advance(byMilliseconds: 1)
                    requests.first.take()?.end()
                    requests.second.take()?.end()
                }
            }
            #expect(child(lines["parent.a"]?.first, "child.a")?.count == 50)
            #expect(names(lines["parent.a"]?.first) == ["child.a"])
            #expect(child(lines["parent.b"]?.first, "child.b")?.count == 50)
            #expect(names(lines["parent.b"]?.first) == ["child.b"])
            #expect(child(lines["request.one"]?.first, "one.step")?.count == 20)
            #expect(names(lines["request.one"]?.first) == ["one.step"])
            #expect(child(lines["request.two"]?.first, "two.step")?.count == 20)
            #expect(names(lines["request.two"]?.first) == ["two.step"])
        }

        @Test func explicitChildrenOfAStoredSpanAcrossCallbacks() async throws {
            let lines = try await recorded { clock in
                let request = RequestPair()
                request.first = Perf.begin("connection", slowMs: 0)
                let group = DispatchGroup()
                let queues = (0..<3).map { DispatchQueue(label: "callback-\($0)") }
                for (index, queue) in queues.enumerated() {
                    group.enter()
                    // The child is made on the request's side and ended in the callback.
                    let query = request.withFirst { $0.child("db.query", slowMs: 60_000) }
                    let handed = SpanBox(query)
                    queue.async {
                        clock.advance(byMilliseconds: UInt64(index + 1))
                        handed.take()?.end()
                        group.leave()
                    }
                    group.wait()
                }
                // A child that ends after its parent is not counted in it.
                let late = request.withFirst { $0.child("late", slowMs: 60_000) }
                request.first.take()?.end()
                late?.end()
            }
            let connection = lines["connection"]?.first
            #expect(child(connection, "db.query")?.count == 3)
            #expect(child(connection, "db.query")?.totalMs == 6)
            #expect(child(connection, "db.query")?.maxMs == 3)
            #expect(child(connection, "late") == nil)
        }
    }
}

/// Spans a test keeps across closures, behind a lock.
private final class RequestPair: @unchecked Sendable {
    private let lock = NSLock()
    var first: Perf.Span?
    var second: Perf.Span?

    func withFirst(_ body: (inout Perf.Span) -> Perf.Span) -> Perf.Span? {
        lock.lock()
        defer { lock.unlock() }
        guard var span = first.take() else { return nil }
        let child = body(&span)
        first = consume span
        return child
    }
}

/// One span handed to another thread, ended there once.
private final class SpanBox: @unchecked Sendable {
    private let lock = NSLock()
    private var span: Perf.Span?

    init(_ span: consuming Perf.Span?) { self.span = span }

    func take() -> Perf.Span? {
        lock.lock()
        defer { lock.unlock() }
        return span.take()
    }
}
