// Temporary files a writer killed mid-write left behind, in folders several processes share.
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The clean-up of writers that write under a temporary name and rename into place (session index
/// records, diagnostic payloads): a temporary file is deleted only once it is older than any write
/// takes, so a writer still writing, in this process or another, never loses its file.
package enum AbandonedTemporaries {
    /// Older than this, a temporary file was abandoned: a write takes milliseconds.
    package static let ageSeconds = 600

    /// Deletes the files of `folder` whose names `isTemporary` accepts and whose last change is
    /// more than ``ageSeconds`` old. Another process deleting the same file meanwhile is harmless.
    package static func remove(in folder: String, where isTemporary: (String) -> Bool) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        let now = time(nil)
        for name in names where isTemporary(name) {
            let path = folder + "/" + name
            guard case .success(let status) = CoreSyscalls.status(ofPath: path),
                now - status.st_mtim.tv_sec > ageSeconds
            else { continue }
            _ = CoreSyscalls.unlink(path)
        }
    }
}
