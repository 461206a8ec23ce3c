// Throwaway directories for tests, children and reliability scenarios.
import Foundation

/// A fresh, empty directory under the system's temporary directory; `remove()` deletes it.
public struct TemporaryDirectory: Sendable {
    public let url: URL

    /// Creates `perf-<label>-<pid>-<uuid>`; `label` defaults to the calling function's name.
    public init(_ label: String = #function) throws {
        let safe = String(label.filter { $0.isLetter || $0.isNumber || $0 == "-" }.prefix(60))
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("perf-\(safe)-\(getpid())-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public var path: String { url.path }

    /// `name` inside the directory.
    public func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    public func remove() { try? FileManager.default.removeItem(at: url) }
}
