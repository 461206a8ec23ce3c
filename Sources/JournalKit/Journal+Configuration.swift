// How a journal is set up: its byte budget, its durability and its per-segment header.
import Foundation

extension Journal {
    /// How far an acknowledged append survives.
    public enum Durability: Sendable, Equatable {
        /// In the kernel page cache when `append` returns: survives SIGKILL and any crash of
        /// this process, not power loss or a kernel panic.
        case processDeath
        /// `fdatasync` per append (the directory is fsynced when a segment is created):
        /// survives power loss. Concurrent appenders share syncs; the append lock is never
        /// held across one.
        case fsync
    }

    /// Journal settings.
    ///
    /// ```swift
    /// let configuration = Journal.Configuration(
    ///     byteBudget: 8 << 20, durability: .processDeath, segmentHeader: Data("session 42".utf8))
    /// ```
    public struct Configuration: Sendable {
        /// The most bytes the journal keeps on disk. Segments rotate at half of it and the
        /// oldest whole segment is dropped first (a flight recorder). At least 1 KiB.
        public var byteBudget: Int
        /// How far an acknowledged append survives.
        public var durability: Durability
        /// Written as the first entry of every segment and returned by recovery once per
        /// surviving segment, so whatever describes the entries (a session id, a schema
        /// version) survives rotation. Nil for none.
        public var segmentHeader: Data?

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - byteBudget: The most bytes kept on disk (default 8 MiB).
        ///   - durability: `.processDeath` (default) or `.fsync`.
        ///   - segmentHeader: The entry that starts every segment, or nil.
        public init(byteBudget: Int = 8 << 20, durability: Durability = .processDeath, segmentHeader: Data? = nil) {
            self.byteBudget = byteBudget
            self.durability = durability
            self.segmentHeader = segmentHeader
        }

        /// Bytes at which a segment rotates.
        var segmentLimit: Int { byteBudget / 2 }

        /// Bytes the header frame takes at the start of every segment.
        var headerFrameSize: Int { segmentHeader.map { Framing.headerSize + $0.count } ?? 0 }

        /// The largest payload an entry may have: it must fit a segment beside the header.
        var maxEntrySize: Int { segmentLimit - headerFrameSize - Framing.headerSize }

        func validate() throws(JournalError) {
            guard byteBudget >= 1024 else {
                throw JournalError(
                    code: .invalidConfiguration,
                    message: "byteBudget \(byteBudget) is below the minimum of 1024 bytes; raise it")
            }
            if let header = segmentHeader, header.isEmpty || maxEntrySize < 1 {
                throw JournalError(
                    code: .invalidConfiguration,
                    message: "segmentHeader must be non-empty and leave room for entries in a segment (half of "
                        + "byteBudget); shorten it or raise byteBudget")
            }
        }
    }
}
