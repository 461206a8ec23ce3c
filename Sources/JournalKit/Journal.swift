// PLACEHOLDER with the contract's API and a naive implementation, so dependants compile while
// the real JournalKit is written. Replaced wholesale by the JournalKit work.
import Foundation
import Synchronization

/// A crash-durable, append-only journal (placeholder implementation).
public final class Journal: Sendable {
    /// How far an acknowledged append survives.
    public enum Durability: Sendable, Equatable {
        /// In the kernel page cache when `append` returns: survives SIGKILL, not power loss.
        case processDeath
        /// `fdatasync` per append: survives power loss.
        case fsync
    }

    /// Journal settings.
    public struct Configuration: Sendable {
        public var byteBudget: Int
        public var durability: Durability
        public var segmentHeader: Data?

        public init(byteBudget: Int = 8 << 20, durability: Durability = .processDeath, segmentHeader: Data? = nil) {
            self.byteBudget = byteBudget
            self.durability = durability
            self.segmentHeader = segmentHeader
        }
    }

    /// What recovery found.
    public struct Recovery: Sendable {
        public var entries: [Data]
        public var headers: [Data]
        public var tornTail: Bool
        public var droppedOlderEntries: Bool
    }

    private let path: URL
    private let state: Mutex<[Data]>

    public init(directory: URL, configuration: Configuration = Configuration()) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("placeholder.journal")
        state = Mutex([])
        if let header = configuration.segmentHeader { try append(header) }
    }

    public func append(_ data: Data) throws {
        try state.withLock { entries in
            entries.append(data)
            try JSONEncoder().encode(entries.map { $0.base64EncodedString() }).write(to: path)
        }
    }

    public func close() {}

    public static func recover(directory: URL) throws -> Recovery {
        let path = directory.appendingPathComponent("placeholder.journal")
        guard let data = try? Data(contentsOf: path) else {
            return Recovery(entries: [], headers: [], tornTail: false, droppedOlderEntries: false)
        }
        let strings = try JSONDecoder().decode([String].self, from: data)
        let entries = strings.compactMap { Data(base64Encoded: $0) }
        return Recovery(
            entries: Array(entries.dropFirst()), headers: Array(entries.prefix(1)), tornTail: false,
            droppedOlderEntries: false)
    }
}
