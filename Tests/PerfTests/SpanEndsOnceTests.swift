// A span ends once. A second end of a `Perf.Span` does not compile: the Spans article's snippet
// is compiled against the built module and must fail with the error the article quotes,
// and its idioms for ending later must compile. At run time one begin and one end count once and
// write one line, however the span was moved, and so do `measure` and keyed spans.
import Foundation
import PerfCore
import PerfTestSupport
import Testing

@testable import Perf

@Suite struct SpanEndsOnceCompileTests {
    static let heading = "## A span ends once"
    static let article = PackageDocument.perfArticle("Spans")

    @Test func aSecondEndDoesNotCompileWithTheErrorTheArticleQuotes() throws {
        let section = try MarkdownSection(Self.heading, in: Self.article)
        let twice = try #require(section.swift.first, "Spans.md shows a span ended twice")
        let quoted = try #require(section.quoted.first, "Spans.md quotes the compiler's error")
        let result = try SwiftSnippetCompiler.compile(twice)
        #expect(!result.compiledCleanly, "a span ended twice compiled:\n\(result.output)")
        for line in quoted.split(separator: "\n") {
            #expect(result.output.contains(line), "swiftc's output lacks Spans.md's \(line):\n\(result.output)")
        }
    }

    @Test func endingACopyDoesNotCompile() throws {
        let result = try SwiftSnippetCompiler.compile(
            """
            func copied() {
                let span = Perf.begin("copy", slowMs: 1)
                let copy = span
                span.end()
                copy.end(count: 1)
            }
            """)
        #expect(result.output.contains("error: 'span' consumed more than once"), "\(result.output)")
    }

    /// Also the control for the two above: the module, its C module maps and swiftc are found.
    @Test func theArticlesIdiomsForEndingLaterCompile() throws {
        let idioms = try MarkdownSection(Self.heading, in: Self.article).swift.dropFirst()
        #expect(!idioms.isEmpty)
        let result = try SwiftSnippetCompiler.compile(idioms.joined(separator: "\n\n"))
        #expect(result.compiledCleanly, "\(ChildProcess.describe(result.status)):\n\(result.output)")
    }
}

extension PerfGlobalStateTests {
    @Suite struct SpanEndsOnceTests {
        /// Installs into a fresh directory, runs `body`, shuts down and returns the ledger's events.
        private func recorded(_ body: () async throws -> Void) async throws -> [LedgerEvent] {
            let directory = try TemporaryDirectory("ends-once")
            defer { directory.remove() }
            let configuration = Perf.Configuration(
                directory: directory.url, app: Perf.AppInfo(name: "ends-once"), recording: .enabled)
            #expect(Perf.install(configuration, environment: [:], clock: SystemClock(), report: { _ in }))
            defer { Perf.shutdown() }
            try await body()
            Perf.shutdown()
            return try LedgerReader(directory: directory.url).readAll().events
        }

        /// The number of span lines named `name`, and its histogram's count.
        private func figures(_ name: String, in events: [LedgerEvent]) -> (lines: Int, count: UInt64) {
            (events.filter { $0.kind == .span && $0.name == name }.count, Perf.spanHistograms()[name]?.count ?? 0)
        }

        @Test func oneBeginAndEndCountsOnceAndWritesOneLine() async throws {
            let events = try await recorded {
                let span = Perf.begin("once.scoped", slowMs: 0)
                span.end(detail: "/v1/items", count: 3)
            }
            #expect(figures("once.scoped", in: events) == (1, 1))
        }

        @Test func anOptionalSpanEndsOnceHoweverOftenItIsTaken() async throws {
            func finish(_ span: consuming Perf.Span) { span.end(exit: .failure, reason: "Timeout") }
            let events = try await recorded {
                var pending: Perf.Span? = Perf.begin("once.optional", slowMs: 0)
                pending.take()?.end()
                pending.take()?.end()
                var deferred: Perf.Span? = Perf.begin("once.deferred", slowMs: 0)
                defer { deferred.take()?.end() }
                var moved: Perf.Span? = Perf.begin("once.consumed", slowMs: 0)
                if let span = moved.take() { finish(span) }
                pending.take()?.end()
            }
            #expect(figures("once.optional", in: events) == (1, 1))
            #expect(figures("once.deferred", in: events) == (1, 1))
            #expect(figures("once.consumed", in: events) == (1, 1))
        }

        @Test func aSpanMovedToAnotherTaskEndsOnce() async throws {
            let events = try await recorded {
                var span: Perf.Span? = Perf.begin("once.task", slowMs: 0)
                await Task.detached { span.take()?.end(count: 1) }.value
            }
            #expect(figures("once.task", in: events) == (1, 1))
        }

        /// Already end-once before spans were `~Copyable`: `measure` ends its own token once, and a
        /// second end by key finds nothing open and writes an unmatched-end note, not a span.
        @Test func measureAndKeyedSpansEndOnce() async throws {
            let events = try await recorded {
                _ = Perf.measure("once.measure", slowMs: 0) { 1 }
                Perf.begin(key: "once-key", "once.keyed", slowMs: 0)
                Perf.end(key: "once-key")
                Perf.end(key: "once-key")
            }
            #expect(figures("once.measure", in: events) == (1, 1))
            #expect(figures("once.keyed", in: events) == (1, 1))
            #expect(events.filter { $0.kind == .note && $0.name == "perf.unmatchedEnd" }.count == 1)
        }
    }
}
