// Every output format of one verdict, golden; JUnit parsed as XML and held to the vendored Jenkins
// schema (scripts/validate/junit-10.xsd); the GitHub annotation cap.
import Foundation
import Perf
import Testing

@testable import PerfReport
@testable import PerfReportCLI

#if canImport(FoundationXML)
    import FoundationXML
#endif

@Suite struct CheckOutputTests {
    /// The golden scenario's verdict, with stable paths.
    private func verdict() throws -> BudgetVerdict {
        let budgets = try Budgets(bytes: Array(CheckFixture.budgets.utf8), path: "perf-budgets.json")
        let head = try ReportFigures(bytes: Array(CheckFixture.head.utf8), path: "head.json")
        let base = try ReportFigures(bytes: Array(CheckFixture.base.utf8), path: "base.json")
        return try BudgetCheck(budgets: budgets).run(current: head, baseline: base)
    }

    @Test(arguments: GoldenFormat.allCases)
    func everyFormatMatchesItsGolden(format: GoldenFormat) throws {
        let verdict = try verdict()
        let rendered: String
        switch format {
        case .text: rendered = verdict.text()
        case .github: rendered = verdict.githubCommands()
        case .junit: rendered = verdict.junit()
        case .markdown: rendered = verdict.markdown()
        case .json: rendered = verdict.json()
        }
        #expect(rendered == format.golden)
    }

    @Test func junitIsWellFormedXMLWithOneTestcasePerCheck() throws {
        let verdict = try verdict()
        let xml = verdict.junit()
        #if canImport(FoundationXML)
            let document = try XMLDocument(data: Data(xml.utf8), options: [])
            let suite = try #require(document.rootElement()?.elements(forName: "testsuite").first)
            let cases = suite.elements(forName: "testcase")
            #expect(cases.count == verdict.checks.filter { $0.status != .unbudgeted }.count)
            #expect(suite.attribute(forName: "tests")?.stringValue == String(cases.count))
            let failures = cases.filter { !$0.elements(forName: "failure").isEmpty }
            #expect(failures.map { $0.attribute(forName: "classname")?.stringValue } == ["api.get"])
            #expect(cases.filter { !$0.elements(forName: "skipped").isEmpty }.count == 1)
        #else
            // Without an XML parser: every element opened is closed, in order.
            #expect(xml.components(separatedBy: "<testcase ").count - 1 == 8)
            #expect(
                xml.components(separatedBy: "<testsuite ").count == xml.components(separatedBy: "</testsuite>").count)
        #endif
    }

    /// Every element and attribute of the JUnit output is one Jenkins' schema allows where it
    /// stands, and every attribute it requires is there: the vendored junit-10.xsd read as the
    /// table of element → attributes and children (xmllint checks order and the rest in CI,
    /// scripts/validate-exports.sh).
    @Test func junitUsesOnlyWhatTheJenkinsSchemaAllows() throws {
        #if canImport(FoundationXML)
            let schema = try JUnitSchema()
            #expect(schema.elements["testsuites"]?.attributes.contains("skipped") == false)
            #expect(schema.elements["testsuite"]?.attributes.contains("skipped") == true)
            let incomplete = BudgetVerdict(
                checks: [
                    BudgetVerdict.Check(
                        subject: "gone", metric: "", kind: .presence, status: .missing, level: .error, unit: .count,
                        expectation: "present in the report"),
                    BudgetVerdict.Check(
                        subject: "maybe", metric: "", kind: .presence, status: .missing, level: .warn, unit: .count,
                        expectation: "present in the report"),
                    BudgetVerdict.Check(
                        subject: "fast", metric: "p50", kind: .regression, status: .improved, level: .error,
                        unit: .milliseconds, current: 1, baseline: 5, expectation: "within +15% or +2ms"),
                    BudgetVerdict.Check(
                        subject: "other", metric: "", kind: .presence, status: .unbudgeted, level: .off, unit: .count,
                        expectation: "no rule matches"),
                ], reports: ["r"], failOnImprovement: true)
            let golden = try verdict()
            for rendered in [golden, incomplete, BudgetVerdict(checks: [], reports: [])] {
                for command in ["check", "compare"] {
                    let document = try XMLDocument(data: Data(rendered.junit(command: command).utf8), options: [])
                    let root = try #require(document.rootElement())
                    #expect(root.name == "testsuites")
                    #expect(schema.problems(root) == [], "\(command): \(rendered.outcome)")
                    #expect(root.attribute(forName: "skipped") == nil)
                }
            }
            // The checker itself bites: the root as the writer once wrote it.
            let old = try XMLDocument(
                data: Data(#"<testsuites tests="0" skipped="0"><testsuite name="s" tests="0"/></testsuites>"#.utf8))
            #expect(schema.problems(try #require(old.rootElement())) == ["<testsuites> has attribute skipped"])
        #endif
    }

    @Test func junitEscapesHostileNames() throws {
        let xml = BudgetVerdict(
            checks: [
                BudgetVerdict.Check(
                    subject: "a<b>&\"c'\u{1}", metric: "count", kind: .limit, status: .fail, level: .error,
                    unit: .count,
                    current: 2, expectation: "≤ 1", message: "]]> <x/>")
            ], reports: ["r"]
        ).junit()
        #expect(!xml.contains("a<b>"))
        #expect(!xml.contains("\u{1}"))
        #if canImport(FoundationXML)
            let document = try XMLDocument(data: Data(xml.utf8), options: [])
            let testcase = try #require(
                document.rootElement()?.elements(forName: "testsuite").first?.elements(forName: "testcase").first)
            #expect(testcase.attribute(forName: "classname")?.stringValue == "a<b>&\"c'")
        #endif
    }

    @Test func githubShowsTenAnnotationsPerLevelAndCountsTheRest() {
        let failing = (0..<25).map { index in
            BudgetVerdict.Check(
                subject: "span\(index)", metric: "count", kind: .limit, status: .fail, level: .error, unit: .count,
                current: 2, expectation: "≤ 1", site: "App/File.swift:\(index + 1)")
        }
        let warning = (0..<3).map { index in
            BudgetVerdict.Check(
                subject: "slow\(index)", metric: "max", kind: .limit, status: .warn, level: .warn, unit: .milliseconds,
                current: 2, expectation: "≤ 1ms")
        }
        let lines = BudgetVerdict(checks: failing + warning, reports: ["r"]).githubCommands()
            .split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("::error ") }.count == 10)
        #expect(lines.filter { $0.hasPrefix("::warning ") }.count == 3)
        let notices = lines.filter { $0.hasPrefix("::notice ") }
        #expect(notices.count == 1)
        #expect(notices.first?.contains("15 more annotations not shown") == true)
        #expect(
            lines.first
                == "::error file=App/File.swift,line=1,title=perf%3A span0 count::✘ span0 count (error): expected ≤ 1, found 2"
        )
    }

    @Test func githubFormatAppendsTheMarkdownSummaryWhenAsked() throws {
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let head = try CheckFixture.write(CheckFixture.head, "head.json", in: directory)
        let budgets = try CheckFixture.write(CheckFixture.budgets, "budgets.json", in: directory)
        let summary = try CheckFixture.write("# earlier step\n", "summary.md", in: directory)
        let result = PerfReportCommand.run(
            ["check", head, "--budgets", budgets, "--format", "github"],
            environment: ["GITHUB_STEP_SUMMARY": summary, "GITHUB_WORKSPACE": directory.path], progress: { _ in })
        #expect(result.status == ExitCode.breach)
        #expect(result.stdout.hasPrefix("::error title=perf%3A api.get p95::"), "App/API.swift is not in the workspace")
        let written = try String(contentsOfFile: summary, encoding: .utf8)
        #expect(written.hasPrefix("# earlier step\n## perf-report check: ✘ fail (exit 1)"))
        // Without the variable, nothing is appended anywhere and the annotations are the same.
        let plain = PerfReportCommand.run(
            ["check", head, "--budgets", budgets, "--format", "github"], environment: [:], progress: { _ in })
        #expect(plain.stdout.split(separator: "\n").count == result.stdout.split(separator: "\n").count)
    }

    @Test func githubResolvesCallSitesUnderSources() throws {
        let directory = try CLIFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("Sources/App/Net"), withIntermediateDirectories: true)
        try CheckFixture.write("", "Sources/App/Net/API.swift", in: directory)
        let locator = SourceLocator(root: directory.path)
        #expect(locator.path(forFileID: "App/API.swift") == "Sources/App/Net/API.swift")
        #expect(locator.path(forFileID: "App/Gone.swift") == nil)
    }
}

#if canImport(FoundationXML)
    /// scripts/validate/junit-10.xsd as, per element, the attributes it allows (and requires)
    /// and the elements it may hold.
    struct JUnitSchema {
        struct Element {
            var attributes: Set<String> = []
            var required: Set<String> = []
            var children: Set<String> = []
        }

        static let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../scripts/validate/junit-10.xsd").standardizedFileURL

        var elements: [String: Element] = [:]

        init() throws {
            let document = try XMLDocument(contentsOf: Self.url, options: [])
            for declaration in Self.children(of: try #require(document.rootElement()), named: "element") {
                guard let name = declaration.attribute(forName: "name")?.stringValue else { continue }
                var element = Element()
                Self.collect(declaration, into: &element)
                elements[name] = element
            }
            #expect(elements.count >= 10, "junit-10.xsd declares the JUnit elements")
        }

        /// `xs:attribute` and `xs:element ref=` anywhere under a declaration.
        static func collect(_ node: XMLElement, into element: inout Element) {
            for child in node.children?.compactMap({ $0 as? XMLElement }) ?? [] {
                let kind = child.name?.split(separator: ":").last.map(String.init)
                if kind == "attribute", let name = child.attribute(forName: "name")?.stringValue {
                    element.attributes.insert(name)
                    if child.attribute(forName: "use")?.stringValue == "required" { element.required.insert(name) }
                } else if kind == "element", let ref = child.attribute(forName: "ref")?.stringValue {
                    element.children.insert(ref)
                }
                collect(child, into: &element)
            }
        }

        static func children(of node: XMLElement, named kind: String) -> [XMLElement] {
            node.children?.compactMap { $0 as? XMLElement }
                .filter { $0.name?.split(separator: ":").last.map(String.init) == kind } ?? []
        }

        /// What in `node` and below the schema does not allow, one line each.
        func problems(_ node: XMLElement) -> [String] {
            let name = node.name ?? "?"
            guard let element = elements[name] else { return ["<\(name)> is not a JUnit element"] }
            let present = Set(node.attributes?.compactMap(\.name) ?? [])
            var problems = present.subtracting(element.attributes).sorted().map { "<\(name)> has attribute \($0)" }
            problems += element.required.subtracting(present).sorted().map { "<\(name)> lacks attribute \($0)" }
            for child in node.children?.compactMap({ $0 as? XMLElement }) ?? [] {
                let childName = child.name ?? "?"
                if element.children.contains(childName) {
                    problems += self.problems(child)
                } else {
                    problems.append("<\(name)> holds <\(childName)>")
                }
            }
            return problems
        }
    }
#endif
