// Helpers of the report tests: the hand-made fixture directory, copies of it, and a fingerprint
// of a directory tree to prove building never mutates it.
import Foundation
import Testing

@testable import Perf

enum ReportFixture {
    /// `Tests/PerfTests/Fixtures/report/`.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/report")
    /// The hand-made data directory: a crashed session with an orphaned span and a fatal hang, a
    /// terminated one, an active one, a malformed line, an unknown kind, a torn last line, an
    /// invalid payload and a temporary payload file.
    static let data = root.appendingPathComponent("data")
    /// The committed report of ``data``; `PERF_UPDATE_GOLDEN=1` rewrites it.
    static let golden = root.appendingPathComponent("golden-report.json")

    /// A fresh copy of the fixture directory.
    static func copy() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory("report")
        try FileManager.default.removeItem(at: directory.url)
        try FileManager.default.copyItem(at: data, to: directory.url)
        return directory
    }

    /// Every path under `url` with its size, modification time and content hash, sorted.
    static func fingerprint(_ url: URL) throws -> [String] {
        let manager = FileManager.default
        var entries: [String] = []
        let paths = try manager.subpathsOfDirectory(atPath: url.path).sorted()
        for path in paths {
            let full = url.appendingPathComponent(path).path
            let attributes = try manager.attributesOfItem(atPath: full)
            let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            let contents = manager.contents(atPath: full).map { Array($0).hashValue } ?? 0
            entries.append("\(path) \(attributes[.size] ?? 0) \(modified) \(contents)")
        }
        return entries
    }
}
