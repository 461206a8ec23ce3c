// swift-tools-version:6.0
// Perf: performance instrumentation for Swift programs on Linux. No outside dependencies, by design:
// the machines that build Perf (and the services that embed it) cannot fetch packages.
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "Perf",
    products: [
        .library(name: "Perf", targets: ["Perf"]),
        .library(name: "PerfReport", targets: ["PerfReport"]),
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
            dependencies: [
                "Perf", "PerfReport", "PerfCore", "JournalKit", "CPerfShims", "CPerfAllocCounter", "PerfTestSupport",
            ],
            swiftSettings: strict
        ),
        // Test support, never a product: the one seeded generator, temporary directories, the
        // child-process runner, waitUntil, the journal crash payload and the shared fixtures.
        .target(name: "PerfTestSupport", path: "Tests/PerfTestSupport", swiftSettings: strict),
        // The crash and kill children tests and reliability scenarios launch (`perf-test-child <kind>`).
        // Not a product: every test target that launches it lists it as a dependency.
        .executableTarget(
            name: "perf-test-child",
            dependencies: ["Perf", "PerfCore", "JournalKit", "CPerfShims", "CPerfAllocCounter", "PerfTestSupport"],
            swiftSettings: strict
        ),
        // Reliability scenarios (scripts/reliability.sh). They launch perf-test-child and perf-report,
        // declared so that building perf-reliability builds them (an executable dependency is built
        // beside it; its main is not linked in).
        .executableTarget(
            name: "perf-reliability",
            dependencies: [
                "Perf", "PerfReport", "PerfCore", "JournalKit", "PerfTestSupport", "CPerfAllocCounter",
                .target(name: "perf-test-child"), .target(name: "perf-report"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "JournalKitTests",
            dependencies: [
                "JournalKit", "CPerfShims", "CPerfAllocCounter", "PerfTestSupport", .target(name: "perf-test-child"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "PerfCoreTests",
            dependencies: [
                "PerfCore", "JournalKit", "CPerfShims", "CPerfAllocCounter", "PerfTestSupport",
                .target(name: "perf-test-child"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "PerfTests",
            dependencies: [
                "Perf", "PerfCore", "JournalKit", "CPerfShims", "CPerfAllocCounter", "PerfTestSupport",
                .target(name: "perf-test-child"),
                // Reads back the reports the runtime's builder writes.
                "PerfReport",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "PerfReportTests", dependencies: ["PerfReport", "Perf", "PerfCore", "PerfTestSupport"],
            swiftSettings: strict),
        // The scenario results of perf-reliability (PASS, MISS, SKIPPED); launches nothing.
        .testTarget(
            name: "PerfReliabilityTests", dependencies: [.target(name: "perf-reliability"), "Perf"],
            swiftSettings: strict),
        .testTarget(
            name: "PerfReportCLITests",
            dependencies: [
                "PerfReportCLI", "PerfReport", "PerfTestSupport", .target(name: "perf-report"),
                .target(name: "perf-bench"), .target(name: "perf-test-child"),
            ],
            swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)

// scripts/validate-sanitizers.sh sets PERF_SANITIZER_BUILD for its two sanitizer builds, which run
// the host check (perf-test-child) and the runtime's suites only: the CLI, the tools and their tests
// are left out of them (PerfReport stays: PerfTests reads the reports it builds with it). On Linux
// every test target is linked into one bundle, so without this each sanitizer build would compile
// every module and every test target.
if Context.environment["PERF_SANITIZER_BUILD"] != nil {
    let reportSide: Set = [
        "PerfReportCLI", "perf-report", "perf-bench", "perf-reliability",
        "PerfReportTests", "PerfReportCLITests", "PerfReliabilityTests",
    ]
    package.targets.removeAll { reportSide.contains($0.name) }
    package.products.removeAll { reportSide.contains($0.name) }
}

// CI's release step runs suites of PerfCoreTests and PerfTests only, and names them in
// PERF_TEST_TARGETS (comma-separated): the other test targets are left out of that build, which
// compiles every declared test target with optimisation. Every product is still built.
if let kept = Context.environment["PERF_TEST_TARGETS"] {
    let names = Set(kept.split(separator: ",").map(String.init))
    package.targets.removeAll { $0.type == .test && !names.contains($0.name) }
}
