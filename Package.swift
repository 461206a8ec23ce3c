// swift-tools-version:6.0
// Perf: performance instrumentation for Swift programs on Linux. No outside dependencies, by design:
// the machines that build Perf (and the services that embed it) cannot fetch packages.
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "Perf",
    products: [
        .library(name: "Perf", targets: ["Perf"]),
        .library(name: "PerfReport", targets: ["PerfReport"]),
        .library(name: "PerfCore", targets: ["PerfCore"]),
        .library(name: "JournalKit", targets: ["JournalKit"]),
        .executable(name: "perf-report", targets: ["perf-report"]),
        .executable(name: "perf-bench", targets: ["perf-bench"]),
    ],
    targets: [
        .target(name: "CPerfShims"),
        // Test and benchmark support only: replaces malloc to count allocations per thread.
        .target(name: "CPerfAllocCounter"),
        .target(name: "JournalKit", dependencies: ["CPerfShims"], swiftSettings: strict),
        .target(name: "PerfCore", dependencies: ["JournalKit", "CPerfShims"], swiftSettings: strict),
        .target(name: "Perf", dependencies: ["PerfCore", "JournalKit", "CPerfShims"], swiftSettings: strict),
        .target(name: "PerfReport", dependencies: ["Perf", "PerfCore"], swiftSettings: strict),
        .target(name: "PerfReportCLI", dependencies: ["PerfReport", "Perf"], swiftSettings: strict),
        .executableTarget(name: "perf-report", dependencies: ["PerfReportCLI"], swiftSettings: strict),
        .executableTarget(
            name: "perf-bench",
            dependencies: ["Perf", "PerfReport", "PerfCore", "JournalKit", "CPerfShims", "CPerfAllocCounter"],
            swiftSettings: strict
        ),
        .testTarget(
            // perf-bench holds the crash child's payload format and kill loop the SIGKILL test shares.
            name: "JournalKitTests", dependencies: ["JournalKit", "CPerfShims", "CPerfAllocCounter", "perf-bench"], swiftSettings: strict),
        .testTarget(name: "PerfCoreTests", dependencies: ["PerfCore", "JournalKit", "CPerfShims", "CPerfAllocCounter"], swiftSettings: strict),
        .testTarget(
            name: "PerfTests", dependencies: ["Perf", "PerfReport", "PerfCore", "JournalKit", "CPerfShims", "CPerfAllocCounter"],
            exclude: ["Fixtures"], swiftSettings: strict),
        .testTarget(name: "PerfReportCLITests", dependencies: ["PerfReportCLI", "PerfReport"], swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
