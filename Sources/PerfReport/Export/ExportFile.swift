import Foundation
// Writing an export where a reader may be looking: node_exporter's textfile collector scrapes
// its directory at any moment and must never see half a file.
import Perf

/// Writes export bytes to a file atomically.
public enum ExportFile {
    /// Writes `bytes` to a temporary file beside `url` (`<name>.tmp-<pid>`, which the textfile
    /// collector's `*.prom` pattern does not match), then renames it over `url`.
    ///
    /// - Throws: ``ReportError`` with code `writeFailed`, naming the file and the errno; the
    ///   temporary file is removed and `url` is left as it was.
    public static func write(_ bytes: [UInt8], to url: URL) throws(Perf.ReportError) {
        try ReportFile.write(bytes, to: url.path)
    }
}
