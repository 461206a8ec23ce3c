// Report and payload files on disk, through the module's syscall seam: written under a temporary
// name and renamed, read whole under a size limit.
import Glibc

/// Writing a report file: temporary name in the destination's folder, then rename, so a reader
/// never sees half a report.
package enum ReportFile {
    package static func write(_ bytes: [UInt8], to path: String) throws(Perf.ReportError) {
        try writeAtomically(bytes, to: path, temporary: path + ".tmp-\(getpid())", mode: 0o644)
    }

    /// Writes `bytes` to `temporary` (EINTR retried and faults injected by the seam), then renames
    /// it over `path`; on any failure the temporary file is removed and nothing is left
    /// half-written. Every error names `path`, never the temporary file.
    package static func writeAtomically(
        _ bytes: [UInt8], to path: String, temporary: String, mode: mode_t
    ) throws(Perf.ReportError) {
        try writeAtomically(bytes, to: path, temporary: temporary, mode: mode, syscalls: .live)
    }

    static func writeAtomically(
        _ bytes: [UInt8], to path: String, temporary: String, mode: mode_t, syscalls: FileSyscalls
    ) throws(Perf.ReportError) {
        let fd: Int32
        switch syscalls.open(temporary, flags: O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode: mode) {
        case .success(let opened): fd = Int32(opened)
        case .failure(let errno):
            // The temporary name is ours, not the caller's: name the file they asked for.
            throw Perf.ReportError(.writeFailed, path: path, Perf.ReportError.describe(errno: errno))
        }
        var failure = bytes.withUnsafeBytes { syscalls.writeAll(fd, $0) }
        syscalls.close(fd)
        if failure == 0, case .failure(let errno) = syscalls.rename(temporary, path) { failure = errno }
        if failure != 0 {
            _ = syscalls.unlink(temporary)
            throw Perf.ReportError(.writeFailed, path: path, Perf.ReportError.describe(errno: failure))
        }
    }

    /// Reads a whole file, refusing one larger than `limit`.
    package static func read(_ path: String, limit: Int) -> Result<[UInt8], Perf.ReportError> {
        read(path, limit: limit, syscalls: .live)
    }

    static func read(_ path: String, limit: Int, syscalls: FileSyscalls) -> Result<[UInt8], Perf.ReportError> {
        let fd: Int32
        switch syscalls.openForReading(path) {
        case .success(let opened): fd = Int32(opened)
        case .failure(let errno):
            let problem = errno == ENOENT ? "no such file" : Perf.ReportError.describe(errno: errno)
            return .failure(Perf.ReportError(.unreadable, path: path, problem))
        }
        defer { syscalls.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count: Int
            switch chunk.withUnsafeMutableBytes({ syscalls.read(fd, into: $0) }) {
            case .success(let read): count = read
            case .failure(let errno):
                return .failure(Perf.ReportError(.unreadable, path: path, Perf.ReportError.describe(errno: errno)))
            }
            if count == 0 { return .success(bytes) }
            guard bytes.count + count <= limit else {
                return .failure(Perf.ReportError(.invalidReport, path: path, "larger than \(limit >> 20) MiB"))
            }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }
}
