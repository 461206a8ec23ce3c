// Segment file naming and discovery: `segment-<20-digit number>.journal`, numbered from 1.
import Foundation
import Glibc

/// The segment files of one journal directory.
enum SegmentDirectory {
    static let prefix = "segment-"
    static let suffix = ".journal"

    /// One segment file on disk.
    struct Listing: Equatable {
        var number: UInt64
        var path: String
    }

    static func fileName(for number: UInt64) -> String {
        let digits = String(number)
        return prefix + String(repeating: "0", count: max(0, 20 - digits.count)) + digits + suffix
    }

    static func path(in directory: String, number: UInt64) -> String {
        directory + "/" + fileName(for: number)
    }

    /// Parses a segment file name; nil for any other file.
    static func number(fromFileName name: String) -> UInt64? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix) else { return nil }
        let digits = name.dropFirst(prefix.count).dropLast(suffix.count)
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else { return nil }
        return UInt64(digits)
    }

    /// The segments in `directory`, oldest first. A missing directory has none.
    static func list(_ directory: String) throws(JournalError) -> [Listing] {
        guard let stream = opendir(directory) else {
            let code = errno
            if code == ENOENT { return [] }
            throw JournalError.directory(directory, errno: code)
        }
        defer { closedir(stream) }
        var listings: [Listing] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let number = number(fromFileName: name) {
                listings.append(Listing(number: number, path: directory + "/" + name))
            }
        }
        return listings.sorted { $0.number < $1.number }
    }

    /// Creates `directory` and its parents with mode 0700 when missing.
    static func create(_ directory: String, syscalls: Syscalls) throws(JournalError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            if isDirectory.boolValue { return }
            throw JournalError.directory(directory, errno: ENOTDIR)
        }
        let parent = (directory as NSString).deletingLastPathComponent
        if !parent.isEmpty, parent != directory { try create(parent, syscalls: syscalls) }
        if case .failure(let failure) = syscalls.mkdir(directory, mode: 0o700), failure.errno != EEXIST {
            throw JournalError.directory(directory, errno: failure.errno)
        }
    }

    /// The size of a file, 0 when it cannot be read.
    static func fileSize(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }
}
