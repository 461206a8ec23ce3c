// swift-tools-version:6.0
// A host program built the way a user's sanitizer CI builds theirs (swift build --sanitize=…),
// depending on Perf by path: scripts/validate-sanitizers.sh runs it under AddressSanitizer with
// LeakSanitizer and under ThreadSanitizer, and checks it recorded spans and a hang.
import PackageDescription

let package = Package(
    name: "sanitizer-host",
    dependencies: [.package(name: "Perf", path: "../..")],
    targets: [
        .executableTarget(
            name: "sanitizer-host", dependencies: [.product(name: "Perf", package: "Perf")],
            swiftSettings: [.unsafeFlags(["-warnings-as-errors"])])
    ],
    swiftLanguageModes: [.v6]
)
