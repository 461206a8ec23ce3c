// Where a span began: captured at begin from #fileID and #line, rendered only on slow paths.

/// The source location a span began at, for reports and CI annotations.
///
/// Capturing it costs nothing: both parts are compile-time constants.
///
/// ```swift
/// let site = CallSite(fileID: #fileID, line: #line)
/// ```
public struct CallSite: Sendable, CustomStringConvertible {
    /// `Module/File.swift`.
    public let fileID: StaticString
    /// The line number.
    public let line: UInt32

    /// Creates a call site; defaults capture the caller's location.
    @inlinable
    public init(fileID: StaticString = #fileID, line: UInt32 = #line) {
        self.fileID = fileID
        self.line = line
    }

    /// `Module/File.swift:88`.
    public var description: String { "\(fileID):\(line)" }
}
