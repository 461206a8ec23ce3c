// Helpers of the report tests (builder, summary, CLI): the hand-made fixture directory, copies of
// it, and a fingerprint of a directory tree to prove building never mutates it.
import Foundation

public enum ReportFixture {
    /// `Tests/Fixtures/report/`.
    public static let root = TestFixtures.folder("report")
    /// The hand-made data directory: a crashed session with an orphaned span and a fatal hang, a
    /// terminated one, an active one, a malformed line, an unknown kind, a torn last line, an
    /// invalid payload and a temporary payload file.
    public static let data = root.appendingPathComponent("data")
    /// The committed report of ``data``; `PERF_UPDATE_GOLDEN=1` rewrites it.
    public static let golden = root.appendingPathComponent("golden-report.json")

    /// A fresh copy of the fixture directory.
    public static func copy() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory("report")
        try FileManager.default.removeItem(at: directory.url)
        try FileManager.default.copyItem(at: data, to: directory.url)
        return directory
    }

    /// Every path under `url` with its size, modification time and content hash, sorted.
    public static func fingerprint(_ url: URL) throws -> [String] {
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
