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
        #expect((3...6).allSatisfy { names.laneName(of: $0, comm: "w\($0)", isMain: false) == "worker \($0)" })
        // A known thread changes its entry in place and drops nobody.
        names.serve("db.queue", tid: 6, comm: "w6")
        #expect(names.count == 4 && names.entry(3) != nil)
        // The next new one drops the oldest left, not the one just changed.
        names.learn("worker 7", tid: 7, comm: "w7")
        #expect(names.count == 4 && names.entry(3) == nil && names.entry(6) != nil)
        #expect(ThreadNames.shared.capacity == 4096)
    }

    /// A thread of the program's own (here showing the `comm` it inherited) that answers watched
    /// targets' pings is named after the three it served last; a name given beats them.
    @Test func aGivenNameBeatsWatchedTargets() {
        let names = ThreadNames(capacity: 8, processComm: "PerfPackageTest")
        for target in ["db.queue", "net.queue", "db.queue", "io.queue", "log.queue"] {
            names.serve(target, tid: 9, comm: "PerfPackageTest")
        }
        // The three it served last, oldest first: log.queue pushed db.queue out.
        #expect(names.laneName(of: 9, comm: "PerfPackageTest", isMain: false) == "net.queue, io.queue, log.queue")
        #expect(!names.wouldServe("net.queue", tid: 9) && !names.wouldServe("log.queue", tid: 9))
        #expect(names.wouldServe("db.queue", tid: 9), "a target pushed out is news again")
        #expect(names.wouldServe("log.queue", tid: 10))
        names.give("ingest.decoder-worker", tid: 9, comm: "PerfPackageTest")
        #expect(names.laneName(of: 9, comm: "PerfPackageTest", isMain: false) == "ingest.decoder-worker")
    }

    /// A pool worker that answered a watched queue's ping runs other work the next moment: its
    /// lane is its root queue's, never the queue's, and the watchdog stops asking about it.
    @Test func aPoolWorkerIsNeverNamedAfterATargetItServed() {
        let names = ThreadNames(capacity: 8, processComm: "PerfPackageTest")
        for comm in ["-qos.overcommit", "oot.default-qos", "DispatchWorker"] {
            names.serve("service.store", tid: 11, comm: comm)
            #expect(names.entry(11)?.targets == [], "\(comm)")
            #expect(!names.wouldServe("service.store", tid: 11), "\(comm)")
            #expect(!names.laneName(of: 11, comm: comm, isMain: false).contains("service.store"))
        }
        #expect(names.laneName(of: 11, comm: "oot.default-qos", isMain: false) == "com.apple.root.default-qos")
        names.learn("com.apple.root.default-qos.overcommit", tid: 12, comm: "-qos.overcommit")
        names.serve("service.store", tid: 12, comm: "-qos.overcommit")
        #expect(
            names.laneName(of: 12, comm: "-qos.overcommit", isMain: false) == "com.apple.root.default-qos.overcommit")
    }

    /// A kernel name the program set (`Thread.name`, `pthread_setname_np`) names the lane while the
    /// thread runs and, remembered from its first span, after it exited; inherited and pool names
    /// are not the program's, and the main thread stays `main`.
    @Test func aKernelNameTheProgramSetOutlivesItsThread() {
        let names = ThreadNames(capacity: 8, processComm: "PerfPackageTest")
        #expect(names.laneName(of: 20, comm: "worker-0", isMain: false) == "worker-0")
        #expect(names.laneName(of: 20, comm: nil, isMain: false) == "thread 20", "nothing remembered yet")
        names.remember(tid: 20, comm: "worker-0")
        #expect(names.laneName(of: 20, comm: nil, isMain: false) == "worker-0")
        // Another thread under the id since: its own name, not the old one.
        #expect(names.laneName(of: 20, comm: "worker-7", isMain: false) == "worker-7")
        // The program's name beats the targets the thread served.
        names.serve("ingest.loop", tid: 21, comm: "ingest-0")
        #expect(names.laneName(of: 21, comm: "ingest-0", isMain: false) == "ingest-0")
        // Inherited and pool names are not remembered.
        for comm in ["PerfPackageTest", "-qos.overcommit", "DispatchWorker", ""] {
            names.remember(tid: 22, comm: comm)
            #expect(names.entry(22) == nil, "\(comm)")
        }
        #expect(names.laneName(of: 1, comm: "renamed-main", isMain: true) == "main")
    }

    @Test func anEntryCountsWhileItsThreadKeepsItsCommOrHasExited() {
        let names = ThreadNames(capacity: 8)
        names.give("perf.lanes.named-worker", tid: 5, comm: "perf.lanes.name")
        #expect(names.laneName(of: 5, comm: "perf.lanes.name", isMain: false) == "perf.lanes.named-worker")
        // Renamed since, or the id now belongs to another thread: not this name.
        #expect(names.laneName(of: 5, comm: "other", isMain: false) == "other")
        // Exited: the name it had is the best there is.
        #expect(names.laneName(of: 5, comm: nil, isMain: false) == "perf.lanes.named-worker")
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
