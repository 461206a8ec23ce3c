// `perf-test-child burst-kill <mode> …`: the two programs of the burst-kill reliability scenario.
//   run <dir> <ackFile> <iteration>
//       installs Perf (recording, 1 GiB cap) on <dir>, prints "session <id>", then 8 threads end
//       over-budget `burst.kill` spans in a loop with the detail `t<thread>-i<iteration>-n<index>`.
//       After each `end()` returned, the thread stores index + 1 into its 8-byte slot of <ackFile>
//       (64 bytes, created by the parent, mapped shared), so whoever kills the process knows how
//       many ends per thread had returned. Prints "ready" once every thread's first end returned;
//       stops after 100,000 ends per thread (far more than a kill lets it reach), so a child
//       nobody kills still ends, and its ledger stays within a few hundred MB.
//   recover <dir>
//       the next start: installs Perf on <dir> (which recovers the killed session), prints
//       "session <id>", "install-ms <ms>" and "total-ms <ms>" (install through shutdown), shuts down.
import Dispatch
import Foundation
import Glibc
import Perf
import Synchronization

enum BurstKillChild {
    static let threads = 8
    static let endsPerThread = 100_000

    static func run(_ arguments: [String]) -> Int32 {
        switch (arguments.first, arguments.count) {
        case ("run", 4):
            guard let iteration = Int(arguments[3]) else { return usage() }
            return burst(directory: URL(fileURLWithPath: arguments[1]), ackPath: arguments[2], iteration: iteration)
        case ("recover", 2):
            return recover(directory: URL(fileURLWithPath: arguments[1]))
        default:
            return usage()
        }
    }

    private static func usage() -> Int32 {
        FileHandle.standardError.write(
            Data(
                ("usage: perf-test-child burst-kill run <dir> <ackFile> <iteration>\n"
                    + "       perf-test-child burst-kill recover <dir>\n").utf8))
        return 2
    }

    /// The acknowledgement slots, one per thread, in a file shared with the parent. Each thread
    /// writes only its own slot; the atomic store keeps it after the `end()` it acknowledges.
    struct AckSlots: @unchecked Sendable {
        let base: UnsafeMutablePointer<Atomic<UInt64>>

        /// Maps `path` (at least `threads` × 8 bytes) shared, or nil with the errno on stderr.
        init?(path: String) {
            let fd = open(path, O_RDWR)
            guard fd >= 0 else {
                FileHandle.standardError.write(Data("cannot open \(path): errno \(errno)\n".utf8))
                return nil
            }
            defer { close(fd) }
            let bytes = BurstKillChild.threads * MemoryLayout<UInt64>.size
            guard let mapped = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), mapped != MAP_FAILED
            else {
                FileHandle.standardError.write(Data("cannot map \(path): errno \(errno)\n".utf8))
                return nil
            }
            base = mapped.bindMemory(to: Atomic<UInt64>.self, capacity: BurstKillChild.threads)
        }

        func acknowledge(thread: Int, ends: Int) { base[thread].store(UInt64(ends), ordering: .releasing) }

        func acknowledged(thread: Int) -> UInt64 { base[thread].load(ordering: .acquiring) }
    }

    private static func burst(directory: URL, ackPath: String, iteration: Int) -> Int32 {
        guard let slots = AckSlots(path: ackPath) else { return 1 }
        Perf.install(
            Perf.Configuration(
                directory: directory, app: Perf.AppInfo(name: "burst-kill", version: "1"), recording: .enabled,
                ledgerCapBytes: 1 << 30))
        WatchdogCrashChild.emit("session \(Perf.sessionID ?? "-")")
        let finished = DispatchGroup()
        for thread in 0..<threads {
            finished.enter()
            Thread {
                for index in 0..<endsPerThread {
                    // A plain route (letters, digits, `-`): the privacy filter keeps it as it is.
                    Perf.begin("burst.kill", slowMs: 0).end(detail: "t\(thread)-i\(iteration)-n\(index)")
                    slots.acknowledge(thread: thread, ends: index + 1)
                }
                finished.leave()
            }.start()
        }
        var poll = timespec(tv_sec: 0, tv_nsec: 100_000)
        while (0..<threads).contains(where: { slots.acknowledged(thread: $0) == 0 }) { nanosleep(&poll, nil) }
        WatchdogCrashChild.emit("ready")
        finished.wait()
        Perf.shutdown()
        return 0
    }

    private static func recover(directory: URL) -> Int32 {
        let started = DispatchTime.now().uptimeNanoseconds
        Perf.install(
            Perf.Configuration(
                directory: directory, app: Perf.AppInfo(name: "burst-kill-next-start", version: "1"),
                recording: .enabled, ledgerCapBytes: 1 << 30))
        let installed = DispatchTime.now().uptimeNanoseconds
        let session = Perf.sessionID ?? "-"
        Perf.shutdown()
        let stopped = DispatchTime.now().uptimeNanoseconds
        WatchdogCrashChild.emit("session \(session)")
        WatchdogCrashChild.emit("install-ms \(Double(installed - started) / 1e6)")
        WatchdogCrashChild.emit("total-ms \(Double(stopped - started) / 1e6)")
        return 0
    }
}
