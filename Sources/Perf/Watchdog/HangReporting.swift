// The seam between the watchdog and whatever records its episodes (ledger, histograms, session
// journal): the facade installs a handler; the watchdog never depends on those components.
import Synchronization

/// Receives a watchdog's episodes. The facade implements it to journal in-progress hangs and to
/// write one ledger line and one histogram tick per finished episode.
protocol HangEventHandler: Sendable {
    /// A hang is still in progress (first at `ongoingAfter`, then after each later stack sample).
    /// `id` is the same in the `hangEnded` call that closes it.
    func hangOngoing(_ episode: Perf.HangWatchdog.Episode, id: UInt64)
    /// An episode finished: every hitch and hang, suppressed or not.
    func hangEnded(_ episode: Perf.HangWatchdog.Episode, id: UInt64)
}

/// The process-wide handler slot the facade fills at install.
enum HangReporting {
    private static let slot = Mutex<(any HangEventHandler)?>(nil)
    private static let nextID = Atomic<UInt64>(1)

    /// Installs (or with `nil`, removes) the handler every watchdog reports to.
    static func install(_ handler: (any HangEventHandler)?) {
        slot.withLock { $0 = handler }
    }

    /// The installed handler, if any.
    static var handler: (any HangEventHandler)? { slot.withLock { $0 } }

    /// A process-unique episode id.
    static func makeEpisodeID() -> UInt64 {
        nextID.add(1, ordering: .relaxed).oldValue
    }
}
