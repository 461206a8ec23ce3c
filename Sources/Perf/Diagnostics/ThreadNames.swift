// The best known names of this process's threads, by kernel id: what the flight recorder's
// `threads` block, and so every trace and timeline lane, calls them.
//
// The kernel keeps 15 bytes of a thread's name (`comm`). libdispatch names a worker after the
// last 15 bytes of its root queue's label (`-qos.overcommit`, `oot.default-qos`), and Foundation's
// `Thread.name` cannot set a longer name at all (its setter calls pthread_setname_np, which refuses
// one, and its getter reads the kernel's name back). Perf learns better names off the hot path
// and keeps them here.
import CPerfShims
import Glibc
import Synchronization

/// A bounded table of thread names by kernel id; when full, the oldest entry goes.
///
/// What it learns, and from where (``laneName(of:comm:isMain:)`` ranks them):
/// - the name the program gave the thread (``Perf/nameCurrentThread(_:)``);
/// - the hang watchdog: a thread of the program's own that answered a watched target's ping is
///   named after the target, as the watchdog calls it (a queue's label, `MainActor`, a custom
///   name), the three it served last. A dispatch pool worker is not: it runs whatever its pool
///   gives it, and a lane named after a queue it once ran would claim every later span on it;
/// - what the thread itself shows when it first records a span (a once-per-thread hook in
///   `perf_thread_stripe_assign`, never on the per-span path): the label of the queue it runs, when
///   its `comm` is that label's last 15 bytes, which is how libdispatch names a worker after its
///   root queue (`com.apple.root.default-qos.overcommit` rather than `-qos.overcommit`); else its
///   `comm`, when the program set it (Foundation's `Thread.name`, `pthread_setname_np`), so that
///   the name outlives the thread.
///
/// An entry counts only while its thread keeps the `comm` it had when the entry was made, or has
/// exited: a renamed thread, or a new thread reusing the id, is not named after the old one.
final class ThreadNames: Sendable {
    /// The process-wide table.
    static let shared = ThreadNames(capacity: 4096, processComm: ThreadNames.comm(of: getpid()))
    /// Most targets one thread is named after: the most recent ones it served.
    static let maximumTargets = 3

    struct Entry: Equatable {
        /// The thread's `comm` when the entry was made.
        var comm: String
        var given: String?
        var targets: [String] = []
        var learned: String?
    }

    /// Entries by tid, and their tids in the order they were made (a ring once full).
    private struct Table {
        var entries: [Int32: Entry] = [:]
        var order: [Int32] = []
        var oldest = 0
    }

    /// Most entries kept.
    let capacity: Int
    /// The main thread's `comm`, which every thread it starts inherits: a thread showing it was
    /// not named by the program.
    let processComm: String?
    private let table = Mutex(Table())

    init(capacity: Int, processComm: String? = nil) {
        self.capacity = max(1, capacity)
        self.processComm = processComm
    }

    /// Entries held.
    var count: Int { table.withLock { $0.entries.count } }

    /// The entry for `tid`, whatever its `comm` (tests).
    func entry(_ tid: Int32) -> Entry? { table.withLock { $0.entries[tid] } }

    /// The name of `tid`'s lane, given its `comm` now (`nil`: the thread has exited). Best first:
    /// the name the program gave it; `main` for the main thread; the whole label of the queue a
    /// worker's `comm` was cut from; the kernel name the program set (its `comm`, or once it
    /// exited the `comm` it had when it first recorded a span); the watched targets it served; a
    /// pool worker's root queue made whole from its `comm`; its `comm`; `thread <tid>`.
    func laneName(of tid: Int32, comm: String?, isMain: Bool) -> String {
        let entry = table.withLock { table -> Entry? in
            guard let entry = table.entries[tid] else { return nil }
            if let comm, comm != entry.comm { return nil }
            return entry
        }
        if let given = entry?.given { return given }
        if isMain { return "main" }
        if let learned = entry?.learned { return learned }
        if let kernel = comm ?? entry?.comm, isProgramSet(kernel) { return kernel }
        if let targets = entry?.targets, !targets.isEmpty { return targets.joined(separator: ", ") }
        guard let comm, !comm.isEmpty else { return "thread \(tid)" }
        return Self.rootQueueLabel(endingWith: comm) ?? comm
    }

    /// Whether the program set `comm`: not empty, not inherited from the main thread, not one
    /// libdispatch gives its pool workers.
    func isProgramSet(_ comm: String) -> Bool {
        !comm.isEmpty && comm != processComm && !Self.isPoolWorker(comm: comm)
    }

    /// Records the name the program gave thread `tid`.
    func give(_ name: String, tid: Int32, comm: String) {
        update(tid, comm: comm) { $0.given = name }
    }

    /// Records that thread `tid` answered a ping of the watched target `target`. A pool worker's
    /// entry is made, so that ``wouldServe(_:tid:)`` spares the next `/proc` read, but it is not
    /// named after the target.
    func serve(_ target: String, tid: Int32, comm: String) {
        let pooled = Self.isPoolWorker(comm: comm)
        update(tid, comm: comm) { entry in
            guard !pooled else { return }
            // The newest targets win: a pool thread keeps serving new queues in a long-lived
            // process, and the first three it ever served say little about it an hour later.
            guard !entry.targets.contains(target) else { return }
            entry.targets.append(target)
            if entry.targets.count > Self.maximumTargets { entry.targets.removeFirst() }
        }
    }

    /// Records a name thread `tid` showed itself (see ``dispatchWorkerName(comm:label:)``).
    func learn(_ name: String, tid: Int32, comm: String) {
        update(tid, comm: comm) { $0.learned = name }
    }

    /// Whether `serve(target, tid:)` could change anything: not when `tid` is named after
    /// `target` already, nor when it is a pool worker. The watchdog asks before reading `/proc`.
    func wouldServe(_ target: String, tid: Int32) -> Bool {
        table.withLock { table in
            guard let entry = table.entries[tid] else { return true }
            return !Self.isPoolWorker(comm: entry.comm) && !entry.targets.contains(target)
        }
    }

    /// Records the `comm` of thread `tid` when the program set it, so that its lane keeps the name
    /// once the thread has exited.
    func remember(tid: Int32, comm: String) {
        guard isProgramSet(comm) else { return }
        update(tid, comm: comm) { _ in }
    }

    /// Changes `tid`'s entry, made anew when the thread's `comm` is not the entry's: the old one
    /// belonged to a thread since renamed, or to another thread with the same id.
    private func update(_ tid: Int32, comm: String, _ body: (inout Entry) -> Void) {
        let capacity = self.capacity
        table.withLock { table in
            if var entry = table.entries[tid], entry.comm == comm {
                body(&entry)
                table.entries[tid] = entry
                return
            }
            var entry = Entry(comm: comm)
            body(&entry)
            if table.entries.updateValue(entry, forKey: tid) != nil { return }
            if table.order.count < capacity {
                table.order.append(tid)
            } else {
                table.entries[table.order[table.oldest]] = nil
                table.order[table.oldest] = tid
                table.oldest = (table.oldest + 1) % capacity
            }
        }
    }
}

extension ThreadNames {
    /// The `comm` of thread `tid` of this process, `nil` once it has exited.
    static func comm(of tid: Int32) -> String? {
        ProcProbe.read("/proc/self/task/\(tid)/comm").map(normalized)
    }

    /// A `comm` as the tables compare it: without the newline `/proc` ends it with.
    static func normalized(_ comm: String) -> String {
        var text = Substring(comm)
        while let last = text.last, last.isWhitespace { text.removeLast() }
        while let first = text.first, first.isWhitespace { text.removeFirst() }
        return String(text)
    }

    /// The name a thread showing `comm` while it runs the queue labelled `label` goes by: the
    /// label, when `comm` is its last 15 bytes (libdispatch cut the label of the root queue the
    /// worker belongs to) or when libdispatch called the worker `DispatchWorker` and the queue is a
    /// root queue; otherwise none. A pool worker's name is its root queue, never a queue it
    /// happens to run: it runs many.
    static func dispatchWorkerName(comm: String, label: String?) -> String? {
        guard let label, label != comm else { return nil }
        if comm.utf8.count == 15 && label.utf8.count > 15 && label.utf8.suffix(15).elementsEqual(comm.utf8) {
            return label
        }
        if comm == "DispatchWorker" && label.hasPrefix("com.apple.root.") { return label }
        return nil
    }

    /// libdispatch's root queues (`init.c`): every pool worker serves one of them for its life.
    static let rootQueueLabels: [String] =
        ["maintenance", "background", "utility", "default", "user-initiated", "user-interactive"]
        .flatMap { ["com.apple.root.\($0)-qos", "com.apple.root.\($0)-qos.overcommit"] }
        + ["com.apple.root.libdispatch-manager"]

    /// Root queue labels by the 15-byte tail libdispatch names their workers with, for the tails
    /// only one label has (the six `overcommit` queues all end in `-qos.overcommit`).
    static let rootQueueTails: [String: String] = {
        var byTail: [String: [String]] = [:]
        for label in rootQueueLabels {
            byTail[String(decoding: label.utf8.suffix(15), as: UTF8.self), default: []].append(label)
        }
        return byTail.compactMapValues { $0.count == 1 ? $0[0] : nil }
    }()

    /// The whole label of the root queue a worker named `comm` belongs to, when `comm` names one.
    static func rootQueueLabel(endingWith comm: String) -> String? { rootQueueTails[comm] }

    /// Every name libdispatch gives a pool worker: the 15-byte tail of a root queue's label, and
    /// `DispatchWorker`. Swift concurrency's cooperative pool runs on the same workers.
    static let poolWorkerNames: Set<String> =
        Set(rootQueueLabels.map { String(decoding: $0.utf8.suffix(15), as: UTF8.self) }).union(["DispatchWorker"])

    /// Whether `comm` is a name libdispatch gives its pool workers.
    static func isPoolWorker(comm: String) -> Bool { poolWorkerNames.contains(comm) }
}

// MARK: - Where names come from

extension ThreadNames {
    /// Makes the once-per-thread slow path report each thread that records from now on. Idempotent;
    /// `Perf.install` calls it.
    static func installHook() { perf_set_thread_hook(threadNamesHook) }

    /// The watchdog thread's report that `tid` answered a ping of `target`. The main thread keeps
    /// `main`; a thread already named after `target` costs one lookup, no `/proc` read.
    func noteServing(_ tid: Int32, target: String) {
        guard tid > 0, tid != getpid(), wouldServe(target, tid: tid), let comm = Self.comm(of: tid) else { return }
        serve(target, tid: tid, comm: comm)
    }

    /// The calling thread's `comm`.
    static func currentComm() -> String? {
        var buffer = [CChar](repeating: 0, count: 16)
        guard perf_current_thread_comm(&buffer) == 0 else { return nil }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return normalized(String(decoding: bytes, as: UTF8.self))
    }
}

/// The C hook: runs on a thread the first time it takes a histogram stripe (its first span end).
private func threadNamesHook(_ tid: Int32, _ comm: UnsafePointer<CChar>?, _ label: UnsafePointer<CChar>?) {
    guard let comm, let label else { return }
    let name = ThreadNames.normalized(String(cString: comm))
    guard let learned = ThreadNames.dispatchWorkerName(comm: name, label: String(cString: label)) else {
        ThreadNames.shared.remember(tid: tid, comm: name)
        return
    }
    ThreadNames.shared.learn(learned, tid: tid, comm: name)
}
