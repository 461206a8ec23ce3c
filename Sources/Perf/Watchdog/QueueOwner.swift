// Which thread holds a dispatch queue right now, read without disturbing anyone.
//
// libdispatch keeps a serial queue's drain lock in the low 30 bits of its 64-bit state word, and
// on Linux the lock value is the holder's kernel thread id: the worker draining the queue's
// items, or the caller of `queue.sync`, whose block runs on its own thread. So while a queue is
// stuck, that word names the one thread to sample. The word's place is private to libdispatch:
// it is found once per process by calibration on a queue of our own (held with `sync`, drained
// by a worker, released), and when any step disagrees the watchdog does without it.
import CPerfShims
import Dispatch
import Glibc
import Synchronization

enum QueueOwner {
    /// Low bits of the state word that hold the owner's tid (`DLOCK_OWNER_MASK`).
    private static let ownerMask: UInt64 = 0x3fff_ffff
    /// Words of the queue object searched during calibration.
    private static let searchedWords = 48

    /// Byte offset of the state word inside the queue object, or `nil` when calibration failed.
    static let stateOffset: Int? = calibrate()

    /// The thread holding `queue`'s drain lock, if the layout is known and the queue is held.
    static func owner(of queue: DispatchQueue) -> Int32? {
        guard let offset = stateOffset, let object = dispatchObject(queue),
            let state = readWord(object + UInt(offset))
        else { return nil }
        let tid = Int32(truncatingIfNeeded: state & ownerMask)
        return tid > 0 ? tid : nil
    }

    /// The C queue object a Swift `DispatchQueue` wraps: on Linux the overlay's class stores it as
    /// its first property, after the object header (metadata and reference counts).
    private static func dispatchObject(_ queue: DispatchQueue) -> UInt? {
        let wrapper = UInt(bitPattern: Unmanaged.passUnretained(queue).toOpaque())
        guard let inner = readWord(wrapper + 16), inner != 0, inner % 8 == 0 else { return nil }
        return UInt(inner)
    }

    private static func readWord(_ address: UInt) -> UInt64? {
        var value: UInt64 = 0
        let copied = withUnsafeMutableBytes(of: &value) { perf_read_memory(address, $0.baseAddress, 8) }
        return copied == 8 ? value : nil
    }

    private static func words(_ object: UInt) -> [UInt64]? {
        var result: [UInt64] = []
        for index in 0..<searchedWords {
            guard let word = readWord(object + UInt(index * 8)) else { return nil }
            result.append(word)
        }
        return result
    }

    /// Finds the one word that holds the caller's tid during `sync`, the worker's tid while a
    /// worker drains, and no owner when idle.
    private static func calibrate() -> Int? {
        let queue = DispatchQueue(label: "perf.watchdog.queue-owner-calibration")
        guard let object = dispatchObject(queue), let idle = words(object) else { return nil }
        var candidates: [Int] = []
        queue.sync {
            let tid = UInt64(UInt32(bitPattern: perf_gettid()))
            guard let held = words(object) else { return }
            candidates = (0..<searchedWords).filter { held[$0] & ownerMask == tid && idle[$0] & ownerMask != tid }
        }
        guard !candidates.isEmpty, let released = words(object) else { return nil }
        candidates = candidates.filter { released[$0] & ownerMask == 0 }
        let confirmed = Mutex<[Int]>([])
        let drained = DispatchSemaphore(value: 0)
        queue.async { [candidates] in
            let tid = UInt64(UInt32(bitPattern: perf_gettid()))
            let held = words(object) ?? []
            confirmed.withLock { $0 = candidates.filter { $0 < held.count && held[$0] & ownerMask == tid } }
            drained.signal()
        }
        guard drained.wait(timeout: .now() + 2) == .success else { return nil }
        let found = confirmed.withLock { $0 }
        return found.count == 1 ? found[0] * 8 : nil
    }
}

/// The one thread to sample while a target is stuck, found without signalling anybody.
enum BlockedThreadFinder {
    /// The holder of `target`, or `nil` when it cannot be named (then the recorder falls back to
    /// recent ping servers and blocked threads).
    static func holder(of target: Perf.HangWatchdog.Target) -> Int32? {
        switch target {
        case .queue(let queue):
            return alive(QueueOwner.owner(of: queue))
        case .main, .mainActor:
            // After `dispatchMain()` the main thread has exited and workers drain the main queue.
            if let owner = alive(QueueOwner.owner(of: .main)) { return owner }
            return alive(Int32(getpid()))
        case .custom, .cooperativePool:
            return nil
        }
    }

    /// `tid` when it names a live thread of this process (not a zombie).
    private static func alive(_ tid: Int32?) -> Int32? {
        guard let tid, tid > 0 else { return nil }
        let state = ProcProbe.thread(tid).state
        guard let state, state != "Z", state != "X" else { return nil }
        return tid
    }
}
