// The command the demo's last line suggests starts the way the demo was started: `swift run` for
// SwiftPM's build product, the bare name when found on PATH, the path otherwise.
import Testing

@testable import PerfReportCLI

@Suite struct DemoInvocationTests {
    @Test(arguments: [
        // `swift run perf-report demo` in the package: the debug product.
        (
            "/home/me/perf/.build/x86_64-unknown-linux-gnu/debug/perf-report", "/home/me/perf/.build/debug/perf-report",
            "/home/me/perf", "swift run perf-report"
        ),
        // `swift run -c release perf-report demo`: the same build, not a debug one from scratch.
        (
            "/home/me/perf/.build/x86_64-unknown-linux-gnu/release/perf-report",
            "/home/me/perf/.build/release/perf-report",
            "/home/me/perf", "swift run -c release perf-report"
        ),
        // `swift run --package-path ~/perf perf-report demo` from elsewhere.
        (
            "/home/me/perf/.build/x86_64-unknown-linux-gnu/debug/perf-report", "/home/me/perf/.build/debug/perf-report",
            "/tmp/try", "swift run --package-path /home/me/perf perf-report"
        ),
        (
            "/home/me/my perf/.build/debug/perf-report", "/home/me/my perf/.build/debug/perf-report", "/tmp",
            "swift run --package-path '/home/me/my perf' perf-report"
        ),
        // Installed: found on PATH.
        ("/usr/local/bin/perf-report", "perf-report", "/tmp", "perf-report"),
        // Started by a path outside a build folder: that path.
        ("/opt/perf/bin/perf-report", "./bin/perf-report", "/opt/perf", "./bin/perf-report"),
    ])
    func theSuggestedCommandStartsAsTheDemoWasStarted(
        executable: String, argument0: String, currentDirectory: String, expected: String
    ) {
        #expect(
            DemoCommand.invocation(executable: executable, argument0: argument0, currentDirectory: currentDirectory)
                == expected)
    }

    @Test(arguments: [
        ("performance-report.json", "performance-report.json"), ("out/r 1.json", "'out/r 1.json'"),
        ("it's.json", #"'it'\''s.json'"#),
    ])
    func aPathIsOneShellWord(path: String, quoted: String) {
        #expect(DemoCommand.shellQuoted(path) == quoted)
    }
}
