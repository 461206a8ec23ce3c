// Counters a journal keeps about itself: what was appended, created, dropped and freed.

extension Journal {
    /// What a journal has done since it was opened.
    ///
    /// Drops are counted honestly: a segment is *dropped* when rotation gives it up and
    /// *freed* only once `unlink(2)` succeeded. A failed unlink stays pending and is retried.
    public struct Statistics: Sendable, Equatable {
        /// Entries appended (segment headers excluded).
        public var appendedEntries = 0
        /// Bytes appended, frame headers included (segment headers excluded).
        public var appendedBytes = 0
        /// Segment files created.
        public var segmentsCreated = 0
        /// Segments given up to stay within the byte budget.
        public var segmentsDropped = 0
        /// Dropped segments whose files were deleted.
        public var segmentsFreed = 0
        /// Dropped segments whose deletion is still pending (failed and awaiting a retry, or queued).
        public var pendingUnlinks = 0
        /// Bytes held by the segments whose deletion is pending.
        public var pendingUnlinkBytes = 0
        /// Failed `unlink(2)` attempts so far.
        public var failedUnlinkAttempts = 0
        /// Segments abandoned after a failed or short write.
        public var poisonedSegments = 0
        /// The number of the segment appends currently go to (0 once closed).
        public var currentSegment: UInt64 = 0

        /// Creates zeroed statistics.
        public init() {}
    }
}
