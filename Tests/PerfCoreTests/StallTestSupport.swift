// A sink and an observer that stall on chosen records until the test opens them, and a thread
// runner: for the tests that one thread's stalled delivery stalls no other thread.
import Foundation
import PerfCore
import Synchronization

/// An inline sink that records everything and blocks in `receive` on the records `stalls` picks,
/// until `open()`, as a ledger `write(2)` on a stalled disk would.
final class StallingSink: RecordSink {
    private let stalls: @Sendable (Record) -> Bool
    private let gate = DispatchSemaphore(value: 0)
    private let isOpen = Atomic<Bool>(false)
    private let received = Mutex<[SequencedRecord]>([])
    /// Calls of `receive` now blocked on the gate.
    let stalled = Atomic<Int>(0)

    /// Stalls on the records `stalls` picks; on every record by default.
    init(stallsOn stalls: @escaping @Sendable (Record) -> Bool = { _ in true }) { self.stalls = stalls }

    func receive(_ record: SequencedRecord) {
        if stalls(record.record), !isOpen.load(ordering: .acquiring) {
            stalled.add(1, ordering: .relaxed)
            gate.wait()
            gate.signal()
        }
        received.withLock { $0.append(record) }
    }

    func open() {
        isOpen.store(true, ordering: .releasing)
        gate.signal()
    }

    var records: [SequencedRecord] { received.withLock { $0 } }

    private let dropReports = Mutex<[(afterRecords: Int, count: UInt64, cause: DropCause)]>([])

    /// Drop reports in order, each with how many records the sink had received before it.
    var drops: [(afterRecords: Int, count: UInt64, cause: DropCause)] { dropReports.withLock { $0 } }

    func receiveDropped(_ count: UInt64, cause: DropCause) {
        let before = records.count
        dropReports.withLock { $0.append((before, count, cause)) }
    }
}

/// An observer that blocks in `spanBegan` for spans of one name until `open()`, as a journal
/// append on a stalled disk would.
final class StallingObserver: LongLivedSpanObserver {
    private let name: String
    private let gate = DispatchSemaphore(value: 0)
    private let isOpen = Atomic<Bool>(false)
    let stalled = Atomic<Int>(0)

    init(stallsOnSpanNamed name: String) { self.name = name }

    func spanBegan(_ span: OpenSpanInfo) {
        guard span.name == name, !isOpen.load(ordering: .acquiring) else { return }
        stalled.add(1, ordering: .relaxed)
        gate.wait()
        gate.signal()
    }

    func spanClosed(id: UInt64, exit: SpanExit) {}

    func open() {
        isOpen.store(true, ordering: .releasing)
        gate.signal()
    }
}

/// Runs `body` on a new thread; `isDone` turns true when it returns.
final class TestThread: Sendable {
    private let done = Atomic<Bool>(false)

    init(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread { [self] in
            body()
            done.store(true, ordering: .releasing)
        }
        thread.name = name
        thread.start()
    }

    var isDone: Bool { done.load(ordering: .acquiring) }
}

extension Record {
    /// A note named `name`, for tests.
    static func testNote(_ name: String, _ wallNanos: UInt64 = 0) -> Record {
        .note(NoteRecord(name: name, wallNanos: wallNanos))
    }

    /// The note's name, or nil for another kind of record.
    var noteName: String? {
        if case .note(let note) = self { return note.name }
        return nil
    }
}
