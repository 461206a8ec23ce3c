// Culprit columns show functions as a person writes them: symbol shapes the Swift demangler
// and the symbolicator really produce, and inputs that must come back unchanged.
import Perf
import Testing

@testable import PerfReport

@Suite struct FunctionNameTests {
    @Test(arguments: [
        // The demo's culprit, as an older build recorded it.
        (
            "function signature specialization <Arg[0] = Dead> of static PerfReportCLI.DemoWorkload.parseHugeFeed() -> ()",
            "PerfReportCLI.DemoWorkload.parseHugeFeed()"
        ),
        ("static PerfReportCLI.DemoWorkload.parseHugeFeed() -> ()", "PerfReportCLI.DemoWorkload.parseHugeFeed()"),
        (
            "generic specialization <Swift.Int> of function signature specialization <Arg[0] = Owned To Guaranteed> of App.Store.save<A>(A) -> ()",
            "App.Store.save<A>(A)"
        ),
        ("generic specialization <(Swift.Int) -> ()> of App.run(_: (A) -> ()) -> ()", "App.run(_: (A) -> ())"),
        // A merged function is the program's code, but may be any of the identical ones.
        ("merged MyService.Store.compact() -> ()", "MyService.Store.compact() (merged)"),
        (
            "merged function signature specialization <Arg[1] = Dead> of static App.Cache.evict(Swift.Int) -> ()",
            "App.Cache.evict(Swift.Int) (merged)"
        ),
        ("specialized App.load() -> Swift.Int", "App.load()"),
        ("App.Parser.parse(Foundation.Data) throws -> App.Feed", "App.Parser.parse(Foundation.Data)"),
        ("App.Sync.upload() async throws -> ()", "App.Sync.upload()"),
        (
            "MyService.Feed.parse(data: Foundation.Data, options: MyService.ParseOptions, progress: (Swift.Double) -> ()) async throws -> Swift.Array<MyService.Item>",
            "MyService.Feed.parse(data:options:progress:)"
        ),
        (
            "App.Store.merge(Swift.Dictionary<Swift.String, Swift.Int>, into: inout App.Index) -> ()",
            "App.Store.merge(_:into:)"
        ),
        ("closure #1 () -> () in App.Service.handle() -> ()", "closure #1 in App.Service.handle()"),
        // Glue is a culprit only when nothing else of the program was on the stack: a thunk.
        (
            "partial apply for closure #2 @Sendable (Swift.Int) async -> () in closure #1 () -> () in static App.main() -> ()",
            "closure #2 in closure #1 in App.main() (thunk)"
        ),
        (
            "implicit closure #1 () throws -> Swift.Bool in App.check() -> ()",
            "implicit closure #1 in App.check() (thunk)"
        ),
        (
            "protocol witness for App.Store.save() throws -> () in conformance App.DiskStore : App.Store in App",
            "App.Store.save() (thunk)"
        ),
        (
            "reabstraction thunk helper from @escaping @callee_guaranteed () -> () to @escaping @callee_guaranteed () -> (@out ())",
            "reabstraction thunk helper from @escaping @callee_guaranteed () -> () to @escaping @callee_guaranteed () -> (@out ()) (thunk)"
        ),
        ("App.Store.items.getter : [App.Item]", "App.Store.items.getter"),
        (
            "(extension in Foundation):Swift.String.init(data: Foundation.Data) -> Swift.String?",
            "Swift.String.init(data: Foundation.Data)"
        ),
        // Not Swift, or not a demangled function: unchanged.
        ("__GI___poll", "__GI___poll"), ("pthread_cond_wait", "pthread_cond_wait"), ("unknown", "unknown"),
        ("std::vector<int>::push_back(int const&)", "std::vector<int>::push_back(int const&)"),
        ("generic specialization <unbalanced of App.f()", "generic specialization <unbalanced of App.f()"),
        ("App.f(unbalanced: (", "App.f(unbalanced: ("), ("", ""), (")))>>>", ")))>>>"),
    ])
    func symbolsReadAsAPersonWritesThem(raw: String, readable: String) {
        #expect(FunctionName.readable(raw) == readable)
    }

    @Test func theSummaryMarksAMergedCulpritAndAThunk() throws {
        let merged =
            "merged function signature specialization <Arg[1] = Dead> of barsPerf.barsBlockedFunction(ms: Swift.Int) -> ()"
        let thunk = "partial apply for closure #1 () -> () in service.main() -> ()"
        let report = PerformanceReport(
            hangs: .init(
                count: 2, maxMs: 615,
                culprits: [.init(culprit: merged, count: 1, maxMs: 600), .init(culprit: thunk, count: 1, maxMs: 615)]))
        let summary = ReportSummary(report: report, path: "r.json")
        #expect(summary.text.contains("  barsPerf.barsBlockedFunction(ms: Swift.Int) (merged)  "), "\(summary.text)")
        #expect(summary.text.contains("  closure #1 in service.main() (thunk)  "), "\(summary.text)")
    }

    @Test func theSummaryShowsTheFunctionAndItsJSONKeepsTheSymbol() throws {
        let raw = "function signature specialization <Arg[0] = Dead> of static App.Feed.parse() -> ()"
        let report = PerformanceReport(
            hangs: .init(count: 1, maxMs: 400, culprits: [.init(culprit: raw, count: 1, maxMs: 400)]))
        let summary = ReportSummary(report: report, path: "r.json")
        #expect(summary.text.contains("  App.Feed.parse()  "), "\(summary.text)")
        #expect(!summary.text.contains("specialization"))
        #expect(summary.json.contains("\"culprit\":\"\(raw)\""))
        #expect(summary.json.contains("\"function\":\"App.Feed.parse()\""))
    }
}
