// Naming a thread for traces and timelines: the kernel keeps 15 bytes of a name, Perf all of it.
import CPerfShims

extension Perf {
    /// Names the calling thread in the flight recorder's `threads` block, from which the Chrome
    /// trace, the OTLP export and the HTML timeline name their lanes.
    ///
    /// Linux keeps 15 bytes of a thread's name, and Foundation's `Thread.name` on Linux keeps no
    /// longer one (the kernel refuses it). This sets the kernel's name to as many whole characters
    /// of `name` as fit, for `top`, `gdb` and `/proc`, and keeps all of `name` for Perf. It holds
    /// while the thread keeps that kernel name. Works before ``install(_:)``; an empty name does
    /// nothing.
    ///
    /// ```swift
    /// Thread {
    ///     Perf.nameCurrentThread("ingest.decoder-worker-1")
    ///     // … spans on this thread show on the lane "ingest.decoder-worker-1"
    /// }.start()
    /// ```
    public static func nameCurrentThread(_ name: String) {
        guard !name.isEmpty else { return }
        var kernelName = ""
        for character in name {
            guard kernelName.utf8.count + character.utf8.count <= 15 else { break }
            kernelName.append(character)
        }
        perf_name_current_thread(kernelName)
        ThreadNames.shared.give(name, tid: perf_gettid(), comm: ThreadNames.currentComm() ?? kernelName)
    }
}
