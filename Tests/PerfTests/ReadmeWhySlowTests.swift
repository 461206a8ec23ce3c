// README's "Why was it slow?" shows a real line of the demo: a page fetch whose children (the
// demo's query and decodes) and selfMs add up to its duration, and whose profile names the read
// its query blocked in.
import Foundation
import Testing

@Suite struct ReadmeWhySlowTests {
    @Test func theQuotedLineIsTheDemosSlowFetchAndItsFiguresAddUp() throws {
        let section = try MarkdownSection("## Why was it slow?")
        let json = try #require(section.blocks.first { $0.language == "json" }?.text)
        let line = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(line["name"] as? String == "demo.fetchPage")
        #expect(line["kind"] as? String == "span")
        let children = try #require(line["children"] as? [[String: Any]])
        #expect(Set(children.compactMap { $0["name"] as? String }) == ["demo.db.query", "demo.decode"])
        let duration = try #require((line["durationMs"] as? NSNumber)?.doubleValue)
        let selfMs = try #require((line["selfMs"] as? NSNumber)?.doubleValue)
        let inChildren = children.compactMap { ($0["totalMs"] as? NSNumber)?.doubleValue }.reduce(0, +)
        #expect(abs(duration - inChildren - selfMs) < 0.001, "selfMs is the duration less the children's time")
        #expect(duration > (line["budgetMs"] as? NSNumber)?.doubleValue ?? .infinity, "the line is over budget")
        // Its profile: every sample blocked in the query's socket read, and the counts add up.
        let profile = try #require(line["profile"] as? [String: Any])
        let top = try #require(profile["top"] as? [[String: Any]])
        let samples = (profile["samples"] as? NSNumber)?.intValue ?? -1
        #expect(samples > 0 && top.compactMap { ($0["count"] as? NSNumber)?.intValue }.reduce(0, +) == samples)
        #expect((top.first?["culprit"] as? String)?.contains("SlowDatabase.query") == true)
        #expect((top.first?["wait"] as? String)?.contains("→ socket 127.0.0.1:") == true)
        // The names are the demo's, at the site the line names.
        let workload = try PackageDocument.text("Sources/PerfReportCLI/DemoWorkload.swift")
        for name in ["demo.fetchPage", "demo.db.query", "demo.decode"] { #expect(workload.contains("\"\(name)\"")) }
        let site = try #require(line["site"] as? String)
        let lineNumber = try #require(Int(site.split(separator: ":").last ?? ""))
        #expect(workload.components(separatedBy: "\n")[lineNumber - 1].contains("demo.fetchPage"), "\(site)")
    }
}
