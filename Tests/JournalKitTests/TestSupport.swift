// Helpers shared by the JournalKit tests: segment files of a temporary directory, entry builders.
// The seeded generator, temporary directories and the crash child's payload are PerfTestSupport's.
import Foundation
import Glibc
import PerfTestSupport
import Testing

@testable import JournalKit

extension TemporaryDirectory {
    /// Segment files present, oldest first.
    func segments() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [])
            .filter { $0.hasPrefix("segment-") }.sorted()
    }

    /// Bytes taken by all segment files.
    func footprint() -> Int {
        segments().reduce(0) { $0 + SegmentDirectory.fileSize(path + "/" + $1) }
    }

    /// The contents of a segment file.
    func contents(of segment: String) throws -> Data {
        try Data(contentsOf: url.appendingPathComponent(segment))
    }

    /// The segment's size in bytes, from stat(2).
    func size(of segment: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.appendingPathComponent(segment).path)
        return (attributes[.size] as? NSNumber)?.intValue ?? -1
    }

    func write(_ data: Data, to segment: String) throws {
        try data.write(to: url.appendingPathComponent(segment))
    }
}

/// Distinct, recognisable entries: "entry <n>" padded to `size` bytes.
func makeEntry(_ index: Int, size: Int? = nil) -> Data {
    var data = Data("entry \(index)|".utf8)
    if let size, size > data.count {
        data.append(contentsOf: (0..<(size - data.count)).map { UInt8(truncatingIfNeeded: index &+ $0) })
    }
    return data
}

#if DEBUG
    /// A journal whose syscalls fail as `faults` says.
    func journalWithFaults(
        at directory: TemporaryDirectory, configuration: Journal.Configuration = .init(byteBudget: 1 << 20)
    ) throws -> (Journal, FaultInjection) {
        let faults = FaultInjection()
        var syscalls = Syscalls.live
        syscalls.faults = faults
        return (try Journal(directory: directory.url, configuration: configuration, syscalls: syscalls), faults)
    }
#endif
