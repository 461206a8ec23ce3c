// `--format github` puts an annotation on the file of a span's call site: a `#fileID`
// (`Module/File.swift`, no folders) resolved in the checkout through the target's folder, which
// need not be named like the module (`Sources/truth-client` holds `truth_client`), relative to
// `$GITHUB_WORKSPACE` or the current directory; omitted whenever the file is not certain.
import Foundation
import Perf
import PerfReport
import PerfTestSupport
import Testing

@testable import PerfReportCLI

@Suite struct GitHubSourcePathTests {
    /// A checkout in a fresh directory: each path (relative, `/`-separated) written empty, or a
    /// directory when it ends in `/`.
    private func checkout(_ paths: [String], manifest: String? = nil) throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory("checkout")
        for path in paths {
            let url = directory.file(path)
            if path.hasSuffix("/") {
                try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            } else {
                try FileManager.default.createDirectory(
                    at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data().write(to: url)
            }
        }
        if let manifest { try Data(manifest.utf8).write(to: directory.file("Package.swift")) }
        return directory
    }

    /// A report whose span `client.get`, recorded at `site`, breaches its count budget.
    private func breach(site: String, in directory: URL) throws -> (report: String, budgets: String) {
        let report = CheckFixture.report(["client.get": .init(count: 5, p50: 1, p95: 1, max: 1, site: site)])
        return (
            try CheckFixture.write(report, "head.json", in: directory),
            try CheckFixture.write(
                #"{"version":1,"spans":[{"match":"client.get","limits":{"count":{"max":1}}}]}"#, "budgets.json",
                in: directory)
        )
    }

    @Test func aTargetFolderNamedUnlikeItsModuleResolves() throws {
        let directory = try checkout(["Sources/truth-client/Sub/Client.swift", "Sources/truth-client/Other.swift"])
        defer { directory.remove() }
        let locator = SourceLocator(root: directory.path)
        #expect(locator.path(forFileID: "truth_client/Client.swift") == "Sources/truth-client/Sub/Client.swift")
        #expect(locator.path(forFileID: "truth_client/Other.swift") == "Sources/truth-client/Other.swift")
        let check = BudgetVerdict.Check(
            subject: "client.get", metric: "count", kind: .limit, status: .fail, level: .error, unit: .count,
            current: 5, expectation: "≤ 1", site: "truth_client/Client.swift:12")
        let commands = BudgetVerdict(checks: [check], reports: ["r"]).githubCommands(resolveFile: locator.path)
        #expect(commands.hasPrefix("::error file=Sources/truth-client/Sub/Client.swift,line=12,title="), "\(commands)")
    }

    /// Perf's own targets: folders perf-report and perf-bench, a test-support target under Tests/
    /// declared with `path:`.
    @Test func perfsOwnCallSitesResolveInItsCheckout() {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        let locator = SourceLocator(root: root)
        #expect(locator.path(forFileID: "perf_report/main.swift") == "Sources/perf-report/main.swift")
        #expect(locator.path(forFileID: "perf_bench/main.swift") == "Sources/perf-bench/main.swift")
        #expect(
            locator.path(forFileID: "PerfTestSupport/TemporaryDirectory.swift")
                == "Tests/PerfTestSupport/TemporaryDirectory.swift")
        #expect(
            locator.path(forFileID: "PerfReport/BudgetVerdict+GitHub.swift")
                == "Sources/PerfReport/Budgets/BudgetVerdict+GitHub.swift")
        // main.swift is in several targets: without the module's folder it is no one's.
        #expect(locator.path(forFileID: "SomeDependency/main.swift") == nil)
    }

    @Test func theRootIsTheWorkspaceOrElseTheCurrentDirectory() throws {
        let directory = try checkout(["Sources/truth-client/Sub/Client.swift"])
        defer { directory.remove() }
        let elsewhere = try TemporaryDirectory("elsewhere")
        defer { elsewhere.remove() }
        let (report, budgets) = try breach(site: "truth_client/Client.swift:12", in: elsewhere.url)
        let arguments = ["check", report, "--budgets", budgets, "--format", "github"]
        let expected = "::error file=Sources/truth-client/Sub/Client.swift,line=12,title="
        for (environment, currentDirectory) in [
            ([:], directory.path),  // GITHUB_WORKSPACE unset: the current directory
            (["GITHUB_WORKSPACE": ""], directory.path),  // empty is unset
            (["GITHUB_WORKSPACE": directory.path], elsewhere.path),  // set: it wins
        ] {
            let result = PerfReportCommand.run(
                arguments, environment: environment, currentDirectory: currentDirectory, progress: { _ in })
            #expect(result.status == .breach)
            #expect(result.stdout.hasPrefix(expected), "\(environment) in \(currentDirectory): \(result.stdout)")
        }
        let outside = PerfReportCommand.run(
            arguments, environment: ["GITHUB_WORKSPACE": elsewhere.path], currentDirectory: directory.path,
            progress: { _ in })
        #expect(outside.stdout.hasPrefix("::error title=perf%3A client.get count::"), "\(outside.stdout)")
    }

    /// The real binary, run in the checkout without GITHUB_WORKSPACE (as outside Actions).
    @Test func theBinaryResolvesAgainstItsCurrentDirectory() throws {
        let directory = try checkout(["Sources/truth-client/Sub/Client.swift"])
        defer { directory.remove() }
        let (report, budgets) = try breach(site: "truth_client/Client.swift:12", in: directory.url)
        var environment = ProcessInfo.processInfo.environment
        environment["GITHUB_WORKSPACE"] = nil
        environment["GITHUB_STEP_SUMMARY"] = nil
        let (stdout, stderr, status) = try CLIFixture.runBinary(
            ["check", report, "--budgets", budgets, "--format", "github"], in: directory.url,
            environment: environment)
        #expect(status == ExitCode.breach.rawValue, "\(stderr)")
        #expect(stdout.hasPrefix("::error file=Sources/truth-client/Sub/Client.swift,line=12,title="), "\(stdout)")
    }

    /// A package in a folder of the repository (a step's `working-directory:`): paths stay
    /// relative to the repository, which is what GitHub wants.
    @Test func aPackageBelowTheWorkspaceGetsRepositoryPaths() throws {
        let directory = try checkout(["services/api/Package.swift", "services/api/Sources/api-core/Client.swift"])
        defer { directory.remove() }
        let locator = SourceLocator.forCheckout(
            environment: ["GITHUB_WORKSPACE": directory.path],
            currentDirectory: directory.path + "/services/api/Sources")
        #expect(locator.path(forFileID: "api_core/Client.swift") == "services/api/Sources/api-core/Client.swift")
    }

    @Test func anAmbiguousFileNameIsOmitted() throws {
        let directory = try checkout([
            "Sources/truth-client/A/Client.swift", "Sources/truth-client/B/Client.swift",
            "Sources/App/Cache/Store.swift", "Sources/App/Disk/Store.swift",
            "Sources/Left/Util.swift", "Sources/Right/Util.swift",
        ])
        defer { directory.remove() }
        let locator = SourceLocator(root: directory.path)
        #expect(locator.path(forFileID: "truth_client/Client.swift") == nil)
        #expect(locator.path(forFileID: "App/Store.swift") == nil)
        // No folder of the module: the name alone matches two files.
        #expect(locator.path(forFileID: "Gone/Util.swift") == nil)
        let check = BudgetVerdict.Check(
            subject: "client.get", metric: "count", kind: .limit, status: .fail, level: .error, unit: .count,
            current: 5, expectation: "≤ 1", site: "truth_client/Client.swift:12")
        let commands = BudgetVerdict(checks: [check], reports: ["r"]).githubCommands(resolveFile: locator.path)
        #expect(commands.hasPrefix("::error title=perf%3A client.get count::"), "\(commands)")
    }

    @Test func aMissingFileIsOmitted() throws {
        let directory = try checkout(
            ["Sources/truth-client/Server.swift", "Sources/App/Client.swift", "Sources/.hidden/Cache.swift"],
            manifest: #"let package = Package(name: "p", targets: [.target(name: "App")])"#)
        defer { directory.remove() }
        let locator = SourceLocator(root: directory.path)
        // The module's folder lacks the file: one elsewhere is another file.
        #expect(locator.path(forFileID: "truth_client/Client.swift") == nil)
        // A module the package does not have (a dependency's span) never lands on a target's file.
        #expect(locator.path(forFileID: "SomeDependency/Client.swift") == nil)
        #expect(locator.path(forFileID: "Cache/Cache.swift") == nil, "hidden folders are not searched")
        for malformed in ["Client.swift", "/Client.swift", "App/", "", "App/../App/Client.swift"] {
            #expect(locator.path(forFileID: malformed) == nil, "\(malformed)")
        }
        #expect(SourceLocator(root: directory.path + "/none").path(forFileID: "App/Client.swift") == nil)
    }

    /// Without a folder of the module, a file found once under Sources/, outside every target the
    /// manifest names, is the one (a target whose `path:` the manifest hides in an expression).
    @Test func withoutTheModulesFolderAUniqueFileUnderSourcesResolves() throws {
        let directory = try checkout(
            ["Sources/weird/Renamed.swift", "Sources/App/Main.swift"],
            manifest:
                #"let package = Package(name: "p", targets: [.target(name: "App"), .target(name: "Renamed", path: base + "weird")])"#
        )
        defer { directory.remove() }
        let locator = SourceLocator(root: directory.path)
        #expect(locator.path(forFileID: "Renamed/Renamed.swift") == "Sources/weird/Renamed.swift")
        #expect(locator.path(forFileID: "Renamed/Main.swift") == nil, "Sources/App is App's")
    }

    /// `path:` of the manifest's targets, read as text; a dependency written `.target(name:)`
    /// inside another target does not take that target's path.
    @Test func manifestPathsAreFollowed() throws {
        let manifest = #"""
            // swift-tools-version:6.0
            import PackageDescription
            /* .target(name: "Core", path: "Wrong") */
            let package = Package(
                name: "p",
                targets: [
                    .target(name: "Core", dependencies: [.target(name: "Util"), .product(name: "X", package: "x")],
                            path: "Lib/core-impl", exclude: ["Fixtures"]),
                    .target(name: "Util"),
                    .testTarget(name: "CoreTests", dependencies: ["Core"], path: "Checks/Core"),
                ])
            """#
        let directory = try checkout(
            [
                "Lib/core-impl/Deep/Engine.swift", "Sources/Util/Engine.swift", "Sources/Core/Engine.swift",
                "Checks/Core/EngineTests.swift", "Wrong/Stray.swift",
            ], manifest: manifest)
        defer { directory.remove() }
        #expect(
            SourceLocator.manifestTargets(manifest)
                == [
                    .init(name: "Util", path: nil), .init(name: "Core", path: "Lib/core-impl"),
                    .init(name: "Util", path: nil), .init(name: "CoreTests", path: "Checks/Core"),
                ])
        // Raw strings read; interpolated, escaped or commented-out ones (comments nest) do not.
        let literals = #"""
            .target(name: "A\(suffix)", path: "a"), .target(name: #"B"#, path: "b/"),
            .target(name: "C", path: "c\"d") /* /* */ .target(name: "Z") */
            """#
        #expect(SourceLocator.manifestTargets(literals) == [.init(name: "B", path: "b/"), .init(name: "C", path: nil)])
        let locator = SourceLocator(root: directory.path)
        #expect(locator.path(forFileID: "Core/Engine.swift") == "Lib/core-impl/Deep/Engine.swift")
        #expect(locator.path(forFileID: "Util/Engine.swift") == "Sources/Util/Engine.swift")
        #expect(locator.path(forFileID: "CoreTests/EngineTests.swift") == "Checks/Core/EngineTests.swift")
        #expect(locator.path(forFileID: "Core/Stray.swift") == nil)
    }

    @Test func c99NamesFollowSwiftPM() {
        #expect(SourceLocator.c99Name("truth-client") == "truth_client")
        #expect(SourceLocator.c99Name("my lib.v2") == "my_lib_v2")
        #expect(SourceLocator.c99Name("2fa-kit") == "_fa_kit")
        #expect(SourceLocator.c99Name("Café") == "Café")
    }

    /// The walk stops after a bounded number of entries; a search it cut short finds nothing
    /// rather than a guess.
    @Test func theWalkIsBounded() throws {
        let directory = try checkout(
            (0..<40).map { "Sources/App/A/File\($0).swift" } + [
                "Sources/App/Z/Client.swift", "Sources/Small/Util.swift",
            ])
        defer { directory.remove() }
        let locator = SourceLocator(root: directory.path, entryLimit: 30)
        #expect(locator.path(forFileID: "App/Client.swift") == nil)
        let roomy = SourceLocator(root: directory.path, entryLimit: 100)
        #expect(roomy.path(forFileID: "App/Client.swift") == "Sources/App/Z/Client.swift")
        #expect(roomy.path(forFileID: "Small/Util.swift") == "Sources/Small/Util.swift")
    }
}
