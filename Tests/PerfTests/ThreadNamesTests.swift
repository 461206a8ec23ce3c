// The thread-name table: its bound, which name wins, when an entry stops counting, and how a
// dispatch worker's name is told from the queue it happens to run.
import Testing

@testable import Perf

@Suite struct ThreadNamesTests {
    @Test func theTableKeepsAtMostItsCapacityDroppingTheOldest() {
        let names = ThreadNames(capacity: 4)
        for tid in Int32(1)...6 { names.learn("worker \(tid)", tid: tid, comm: "w\(tid)") }
        #expect(names.count == 4)
        #expect(names.entry(1) == nil && names.entry(2) == nil)
        #expect((3...6).allSatisfy { names.name(of: $0, comm: "w\($0)") == "worker \($0)" })
        // A known thread changes its entry in place and drops nobody.
        names.serve("db.queue", tid: 6, comm: "w6")
        #expect(names.count == 4 && names.entry(3) != nil)
        // The next new one drops the oldest left, not the one just changed.
        names.learn("worker 7", tid: 7, comm: "w7")
        #expect(names.count == 4 && names.entry(3) == nil && names.entry(6) != nil)
        #expect(ThreadNames.shared.capacity == 4096)
    }

    @Test func aGivenNameBeatsWatchedTargetsWhichBeatALearnedLabel() {
        let names = ThreadNames(capacity: 8)
        names.learn("com.apple.root.default-qos.overcommit", tid: 9, comm: "-qos.overcommit")
        #expect(names.name(of: 9, comm: "-qos.overcommit") == "com.apple.root.default-qos.overcommit")
        for target in ["db.queue", "net.queue", "db.queue", "io.queue", "log.queue"] {
            names.serve(target, tid: 9, comm: "-qos.overcommit")
        }
        // The three it served last, oldest first: log.queue pushed db.queue out.
        #expect(names.name(of: 9, comm: "-qos.overcommit") == "net.queue, io.queue, log.queue")
        #expect(!names.wouldServe("net.queue", tid: 9) && !names.wouldServe("log.queue", tid: 9))
        #expect(names.wouldServe("db.queue", tid: 9), "a target pushed out is news again")
        #expect(names.wouldServe("log.queue", tid: 10))
        names.give("ingest.decoder-worker", tid: 9, comm: "-qos.overcommit")
        #expect(names.name(of: 9, comm: "-qos.overcommit") == "ingest.decoder-worker")
    }

    @Test func anEntryCountsWhileItsThreadKeepsItsCommOrHasExited() {
        let names = ThreadNames(capacity: 8)
        names.give("perf.lanes.named-worker", tid: 5, comm: "perf.lanes.name")
        #expect(names.name(of: 5, comm: "perf.lanes.name") == "perf.lanes.named-worker")
        // Renamed since, or the id now belongs to another thread: not this name.
        #expect(names.name(of: 5, comm: "other") == nil)
        // Exited: the name it had is the best there is.
        #expect(names.name(of: 5, comm: nil) == "perf.lanes.named-worker")
        // A new entry for the id under another comm replaces the old one whole.
        names.serve("db.queue", tid: 5, comm: "other")
        #expect(names.entry(5) == ThreadNames.Entry(comm: "other", targets: ["db.queue"]))
    }

    @Test func aDispatchWorkerIsNamedAfterItsRootQueueNeverAQueueItRuns() {
        let overcommit = "com.apple.root.default-qos.overcommit"
        #expect(ThreadNames.dispatchWorkerName(comm: "-qos.overcommit", label: overcommit) == overcommit)
        #expect(ThreadNames.dispatchWorkerName(comm: "-qos.overcommit", label: "app.database.serial-queue") == nil)
        // Outside any queue the label is libdispatch's default root queue: not this thread's name.
        #expect(ThreadNames.dispatchWorkerName(comm: "PerfPackageTest", label: "com.apple.root.default-qos") == nil)
        #expect(ThreadNames.dispatchWorkerName(comm: "main-thread", label: "main-thread") == nil)
        #expect(ThreadNames.dispatchWorkerName(comm: "short", label: "a-label-ending-in-short") == nil)
        // Later libdispatch names every worker `DispatchWorker`.
        #expect(
            ThreadNames.dispatchWorkerName(comm: "DispatchWorker", label: "com.apple.root.utility-qos")
                == "com.apple.root.utility-qos")
        #expect(ThreadNames.dispatchWorkerName(comm: "DispatchWorker", label: "app.serial") == nil)
    }

    @Test func aRootQueueTailIsMadeWholeOnlyWhenOneLabelEndsThatWay() {
        #expect(ThreadNames.rootQueueLabel(endingWith: "oot.default-qos") == "com.apple.root.default-qos")
        #expect(ThreadNames.rootQueueLabel(endingWith: "r-initiated-qos") == "com.apple.root.user-initiated-qos")
        #expect(ThreadNames.rootQueueLabel(endingWith: ".background-qos") == "com.apple.root.background-qos")
        // Every overcommit root queue ends in `-qos.overcommit`: which one is not known.
        #expect(ThreadNames.rootQueueLabel(endingWith: "-qos.overcommit") == nil)
        #expect(ThreadNames.rootQueueLabel(endingWith: "worker") == nil)
    }
}
