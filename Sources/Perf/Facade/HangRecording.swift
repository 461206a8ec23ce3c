// Wires the hang watchdog's episodes into the installed runtime: a ledger line per episode, a
// per-target histogram tick, and an in-progress marker in the session journal so a kill during a
// hang becomes a `fatal` hang at the next start.
import PerfCore

/// The handler `Perf.install` gives the watchdog.
final class HangRecording: HangEventHandler {
    func hangOngoing(_ episode: Perf.HangWatchdog.Episode, id: UInt64) {
        guard let session = PerfState.runtime()?.session else { return }
        session.setOngoing(Self.marker(for: episode, id: id))
    }

    func hangEnded(_ episode: Perf.HangWatchdog.Episode, id: UInt64) {
        if episode.suppressed == nil {
            PerfState.hangHistograms.record(name: episode.targetName, nanos: Self.nanos(episode.durationMs))
        }
        guard let runtime = PerfState.runtime() else { return }
        runtime.recorder.pipeline.emit(.hang(Self.record(for: episode)))
        runtime.session?.clearOngoing(id: id)
    }

    static func record(for episode: Perf.HangWatchdog.Episode) -> HangRecord {
        HangRecord(
            kind: episode.kind == .hang ? .hang : .hitch, lowerMs: rounded(episode.lowerMs),
            upperMs: rounded(episode.upperMs), stallMs: rounded(episode.stallMs), fatal: episode.fatal,
            suppressed: episode.suppressed?.rawValue, thread: episode.thread.map(describe) ?? "unknown",
            stack: episode.isFullRecord ? episode.stack.map(\.description) : [],
            stuckFrames: episode.stuckFrames.map(\.description),
            culprit: episode.culprit?.symbol.map(SymbolNames.readable),
            targetName: episode.targetName, wallNanos: SystemClock().wallNanos(),
            durationMs: rounded(episode.durationMs), stackQuality: describe(episode.stackQuality),
            wait: waitText(episode), inProgress: episode.inProgress)
    }

    static func marker(for episode: Perf.HangWatchdog.Episode, id: UInt64) -> OngoingMarker {
        var payload: [String: String] = [:]
        payload["culprit"] = episode.culprit?.symbol.map(SymbolNames.readable)
        payload["wait"] = waitText(episode)
        payload["thread"] = episode.thread.map(describe)
        // The marker is rewritten every tick while the hang lasts: the innermost 32 frames say
        // where it is stuck without filling the journal.
        if !episode.stack.isEmpty {
            payload["stack"] = episode.stack.prefix(Self.markerFrames).map(\.description).joined(separator: "\n")
        }
        if !episode.stuckFrames.isEmpty {
            payload["stuckFrames"] = episode.stuckFrames.map(\.description).joined(separator: "\n")
        }
        return OngoingMarker(
            id: id, kind: episode.kind == .hang ? "hang" : "hitch", name: episode.targetName,
            startedWallNanos: episode.startedWallNanos, lastKnownDurationNanos: nanos(episode.durationMs),
            payload: payload)
    }

    /// What the blocked thread waited for, privacy-filtered once here for the ledger line and the
    /// journalled marker alike (a file descriptor's path is the program's data).
    static func waitText(_ episode: Perf.HangWatchdog.Episode) -> String? {
        episode.wait.map { PrivacyFilter.sanitize(detail: $0.description) }
    }

    /// Frames of the stack an in-progress marker keeps.
    static let markerFrames = 32

    static func describe(_ thread: Perf.HangWatchdog.ThreadInfo) -> String {
        var text = "\(thread.name) (tid \(thread.tid)"
        if let state = thread.state { text += ", state \(state)" }
        if let wait = thread.waitChannel, !wait.isEmpty, wait != "0" { text += ", waiting in \(wait)" }
        return text + ")"
    }

    static func describe(_ quality: Perf.HangWatchdog.StackQuality) -> String {
        switch quality {
        case .full: return "full"
        case .partial(let reason): return "partial: \(reason)"
        case .unavailable(let reason): return "unavailable: \(reason)"
        }
    }

    static func rounded(_ ms: Double) -> Double { (ms * 10).rounded() / 10 }

    static func nanos(_ ms: Double) -> UInt64 { ms > 0 ? UInt64(min(ms, 1e12) * 1_000_000) : 0 }
}
