// The committed fixtures shared by the test targets (`Tests/Fixtures/`): the hand-made report
// data directory and its golden report (``ReportFixture``), the export goldens and the HTML
// golden page.
import Foundation

public enum TestFixtures {
    /// `Tests/Fixtures/`.
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures", isDirectory: true)

    /// A folder of fixtures, e.g. `export` or `html`.
    public static func folder(_ name: String) -> URL { root.appendingPathComponent(name, isDirectory: true) }
}
