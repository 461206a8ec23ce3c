// Something the watchdog has seen start and not yet seen end, journalled so a crash can tell.
/// An event in progress, journalled while it lasts so that, if the process dies before it ends,
/// the next start can report it as fatal with its last known duration.
///
/// The hang watchdog sets one when a hang passes 1 s, updates its duration while the hang lasts
/// (``LiveSession/setOngoing(_:)`` with the same ``id`` replaces it) and clears it when the
/// hang ends (``LiveSession/clearOngoing(id:)``).
public struct OngoingMarker: Codable, Sendable, Equatable {
    /// Identifies the marker within its session; a later set with the same id replaces it.
    public var id: UInt64
    /// What is in progress, e.g. `"hang"`.
    public var kind: String
    /// What it is about, e.g. the monitored queue's name.
    public var name: String
    /// When it started, in nanoseconds since the Unix epoch.
    public var startedWallNanos: UInt64
    /// How long it had lasted when last journalled.
    public var lastKnownDurationNanos: UInt64
    /// Small details, e.g. `["culprit": "Feed.reload", "stack": "frame0\nframe1"]`.
    ///
    /// - Note: Keep it small (a few KiB at most): every update journals it whole.
    public var payload: [String: String]

    /// Creates a marker.
    public init(
        id: UInt64, kind: String, name: String, startedWallNanos: UInt64, lastKnownDurationNanos: UInt64,
        payload: [String: String] = [:]
    ) {
        self.id = id
        self.kind = kind
        self.name = name
        self.startedWallNanos = startedWallNanos
        self.lastKnownDurationNanos = lastKnownDurationNanos
        self.payload = payload
    }
}
