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
/// Sources, best first:
/// 1. the name the program gave the thread (``Perf/nameCurrentThread(_:)``);
/// 2. the hang watchdog: a thread that answered a watched target's ping is named after the target,
///    as the watchdog calls it (a queue's label, `main`, `MainActor`, `cooperative-pool`, a custom
///    name); a thread that served several targets is named after the three it served last;
/// 3. what the thread itself shows when it first records a span (a once-per-thread hook in
///    `perf_thread_stripe_assign`, never on the per-span path): the label of the queue it runs, when
///    its `comm` is that label's last 15 bytes, which is how libdispatch names a worker after its
///    root queue (`com.apple.root.default-qos.overcommit` rather than `-qos.overcommit`).
///
/// An entry counts only while its thread keeps the `comm` it had when the entry was made, or has
/// exited: a renamed thread, or a new thread reusing the id, is not named after the old one.
final class ThreadNames: Sendable {
    /// The process-wide table.
    static let shared = ThreadNames(capacity: 4096)
    /// Most targets one thread is named after: the most recent ones it served.
    static let maximumTargets = 3

    struct Entry: Equatable {
        /// The thread's `comm` when the entry was made.
        var comm: String
        var given: String?
        var targets: [String] = []
        var learned: String?

        /// The best of the names.
        var name: String? {
            given ?? (targets.isEmpty ? nil : targets.joined(separator: ", ")) ?? learned
        }
    }

    /// Entries by tid, and their tids in the order they were made (a ring once full).
    private struct Table {
        var entries: [Int32: Entry] = [:]
        var order: [Int32] = []
        var oldest = 0
    }

    /// Most entries kept.
    let capacity: Int
    private let table = Mutex(Table())

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Entries held.
    var count: Int { table.withLock { $0.entries.count } }

    /// The entry for `tid`, whatever its `comm` (tests).
    func entry(_ tid: Int32) -> Entry? { table.withLock { $0.entries[tid] } }

    /// The best name of `tid`, given its `comm` now (`nil`: the thread has exited).
    func name(of tid: Int32, comm: String?) -> String? {
        table.withLock { table -> String? in
            guard let entry = table.entries[tid] else { return nil }
            if let comm, comm != entry.comm { return nil }
            return entry.name
        }
    }

    /// Records the name the program gave thread `tid`.
    func give(_ name: String, tid: Int32, comm: String) {
        update(tid, comm: comm) { $0.given = name }
    }

    /// Records that thread `tid` answered a ping of the watched target `target`.
    func serve(_ target: String, tid: Int32, comm: String) {
        update(tid, comm: comm) { entry in
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
    /// `target` already. The watchdog asks before reading `/proc`.
    func wouldServe(_ target: String, tid: Int32) -> Bool {
        table.withLock { table in
            guard let targets = table.entries[tid]?.targets else { return true }
            return !targets.contains(target)
        }
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
    guard let learned = ThreadNames.dispatchWorkerName(comm: name, label: String(cString: label)) else { return }
    ThreadNames.shared.learn(learned, tid: tid, comm: name)
}
