// The parent-scope pool: exact totals from many threads, late children of an ended parent never
// counted (not even into the slot's next parent), and a full pool said on the parent.
import Foundation
import PerfTestSupport
import Testing

@testable import PerfCore

@Suite struct ChildScopesTests {
    @Test func totalsAreExactFromManyThreadsAtOnce() throws {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        let scopes = ChildScopes(capacity: 8)
        let scope = scopes.acquire()
        let names: [StaticString] = ["a", "b", "c"]
        let plans = (0..<8).map { _ in (0..<2_000).map { _ in (Int(random.next() % 3), random.next() % 1_000 + 1) } }
        DispatchQueue.concurrentPerform(iterations: plans.count) { thread in
            for (name, nanos) in plans[thread] { scopes.add(scope, name: names[name], nanos: nanos) }
        }
        let totals = scopes.release(scope)
        for (index, name) in ["a", "b", "c"].enumerated() {
            let expected = plans.flatMap { $0 }.filter { $0.0 == index }
            let total = try #require(totals.first { $0.name == name }, "seed \(seed)")
            #expect(total.count == UInt64(expected.count), "seed \(seed)")
            #expect(total.totalNanos == expected.map(\.1).reduce(0, +), "seed \(seed)")
            #expect(total.maxNanos == expected.map(\.1).max(), "seed \(seed)")
        }
    }

    @Test func namesPastEightFoldIntoOther() {
        let scopes = ChildScopes(capacity: 2)
        let scope = scopes.acquire()
        let names: [StaticString] = ["n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9"]
        for name in names { scopes.add(scope, name: name, nanos: 10) }
        let totals = scopes.release(scope)
        #expect(totals.count == 9)
        #expect(totals.first { $0.name == ChildScopes.otherName }?.count == 2)
        #expect(totals.reduce(0) { $0 + $1.count } == 10)
    }

    @Test func aChildOfAnEndedParentIsNeverCountedEvenInTheSlotsNextParent() {
        let scopes = ChildScopes(capacity: 1)
        let first = scopes.acquire()
        scopes.add(first, name: "early", nanos: 5)
        #expect(scopes.release(first).map(\.name) == ["early"])
        let second = scopes.acquire()
        #expect(second != first, "the slot's next parent has another generation")
        scopes.add(first, name: "late", nanos: 7)
        #expect(scopes.release(second).isEmpty)
        #expect(scopes.release(first).isEmpty, "an ended scope releases nothing twice")
    }

    @Test func aFullPoolGivesTheExhaustedScopeAndCountsIt() {
        let scopes = ChildScopes(capacity: 2)
        let held = [scopes.acquire(), scopes.acquire()]
        #expect(!held.contains(ParentScope.exhausted))
        let third = scopes.acquire()
        #expect(third == ParentScope.exhausted)
        #expect(scopes.exhausted.load(ordering: .relaxed) == 1)
        scopes.add(third, name: "lost", nanos: 1)
        #expect(scopes.release(third).isEmpty)
        _ = scopes.release(held[0])
        #expect(scopes.acquire() != ParentScope.exhausted, "a released slot is free again")
    }
}
