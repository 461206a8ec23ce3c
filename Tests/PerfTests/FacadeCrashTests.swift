// Real child processes that use the facade as a service would, killed with SIGKILL: every
// acknowledged span line survives, and the next install tells the story of the crash.
import Foundation
import Glibc
import PerfCore
import PerfReport
import PerfTestSupport
import Testing

@testable import Perf

extension PerfGlobalStateTests {
    @Suite struct FacadeCrashTests {
        /// Runs `perf-test-child facade <mode> <dir>`, reads stdout until `lines` complete lines
        /// arrived, SIGKILLs the child and returns every complete line it printed.
        private func killChild(mode: String, directory: URL, after lines: Int) throws -> [String] {
            let child = try ChildProcess(
                executable: BuildProducts.testChild, arguments: ["facade", mode, directory.path])
            var received: [String] = []
            while received.count < lines, let line = child.readLine(timeoutSeconds: 60) { received.append(line) }
            child.killAndWait()
            #expect(ChildProcess.terminatingSignal(child.wait()) == SIGKILL)
            // Lines still in the pipe when the child died were printed too.
            return received + child.readRemainingLines()
        }

        @Test func everyAcknowledgedEndSurvivesSIGKILL() throws {
            let seed = SeededRandom.makeSeed()
            var random = SeededRandom(seed: seed)
            let directory = try TemporaryDirectory("facade-kill")
            defer { directory.remove() }
            var acknowledgedPerRun: [Int] = []
            for _ in 0..<10 {
                let acks = try killChild(mode: "spans", directory: directory.url, after: Int(random.next() % 200) + 1)
                acknowledgedPerRun.append(acks.count)
            }
            let (events, summary) = try LedgerReader(directory: directory.url).readAll()
            let spans = events.filter { $0.kind == .span && $0.name == "crash.span" }
            // Each run's lines carry its session id; the file holds at least every acknowledged count.
            let bySession = Dictionary(grouping: spans, by: \.session)
            #expect(bySession.count == acknowledgedPerRun.count, "seed \(seed)")
            let written = bySession.values.map { $0.compactMap(\.count) }
            for counts in written {
                #expect(counts == Array(0..<counts.count), "seed \(seed): gapless per session")
            }
            for (acknowledged, lines) in zip(acknowledgedPerRun.sorted(), written.map(\.count).sorted()) {
                #expect(lines >= acknowledged, "seed \(seed)")
            }
            #expect(spans.allSatisfy { $0.detail == "/v1/items" }, "the query never reaches the file")
            #expect(summary.malformedLines <= 10, "at most one torn line per kill")
            // Every killed run but the first is recovered as crashed by the next one.
            let crashed = events.filter { $0.kind == .session && $0.name == "crashed" }
            #expect(crashed.count == acknowledgedPerRun.count - 1, "seed \(seed)")
        }

        @Test func aKillDuringAHangBecomesAFatalHangWithItsStack() throws {
            let directory = try TemporaryDirectory("facade-fatal")
            defer { directory.remove() }
            let lines = try killChild(mode: "hang", directory: directory.url, after: 1)
            #expect(lines == ["fatal"])
            Perf.install(
                Perf.Configuration(directory: directory.url, app: Perf.AppInfo(name: "next"), recording: .enabled),
                environment: [:], clock: SystemClock(), report: { _ in })
            Perf.shutdown()
            let events = try LedgerReader(directory: directory.url).readAll().events
            let fatal = events.filter { $0.kind == .hang && $0.fatal == true }
            try #require(fatal.count == 1)
            let hang = fatal[0]
            #expect(hang.name == "child.feed")
            #expect((hang.durationMs ?? 0) >= 1_000, "the last known duration is at least the 1 s marker")
            #expect(hang.culprit?.contains("parseHugeFeed") == true, "\(hang)")
            #expect(hang.stuckFrames?.contains { $0.contains("parseHugeFeed") } == true)
            #expect(events.contains { $0.kind == .session && $0.name == "crashed" && $0.session == hang.session })
        }

        @Test func aSpanKilledWhileOverBudgetIsOrphanedWithItsProfileAndItsOpenChild() throws {
            let directory = try TemporaryDirectory("facade-sampled")
            defer { directory.remove() }
            let child = try ChildProcess(
                executable: BuildProducts.testChild, arguments: ["facade", "sampled", directory.path])
            #expect(child.readLine(timeoutSeconds: 60) == "ready")
            // Killed once its profile (read from the live file, as the next start will) holds
            // samples: a condition, not a pause.
            let sessions = directory.url.appendingPathComponent("sessions")
            var live: ProfileSlots.OpenSpan?
            let deadline = Date().addingTimeInterval(60)
            while live == nil, Date() < deadline {
                for id in (try? FileManager.default.contentsOfDirectory(atPath: sessions.path)) ?? [] {
                    let path = sessions.appendingPathComponent(id).appendingPathComponent(ProfileSlots.fileName).path
                    if let found = ProfileSlots.recover(path: path)?.open.first(where: {
                        ($0.profile?.samples ?? 0) >= 3
                    }) {
                        live = found
                    }
                }
                if live == nil { sched_yield() }
            }
            child.killAndWait()
            try #require(live != nil, "the child's span was sampled")
            Perf.install(
                Perf.Configuration(directory: directory.url, app: Perf.AppInfo(name: "next"), recording: .enabled),
                environment: [:], clock: SystemClock(), report: { _ in })
            Perf.shutdown()
            let events = try LedgerReader(directory: directory.url).readAll().events
            let orphans = events.filter { $0.kind == .span && $0.exit == "orphaned" }
            #expect(
                orphans.map(\.name) == ["stuck.request"], "the child span was under its budget: no profile, no orphan")
            let orphan = try #require(orphans.first)
            let profile = try #require(orphan.profile, "\(orphan)")
            #expect(profile.samples >= 3)
            #expect(profile.open == ["db.wait"], "the span open inside it when it died")
            let waits = profile.top.filter {
                ($0.wait ?? "").hasPrefix("read(") && ($0.culprit ?? "").contains("waitForAnswer")
            }
            #expect(waits.reduce(0) { $0 + $1.count } * 10 >= profile.samples * 8, "\(profile.top)")
            #expect((orphan.lowerMs ?? 0) >= 20, "open at least its budget")
            #expect(events.contains { $0.kind == .session && $0.name == "crashed" && $0.session == orphan.session })
        }

        @Test func nextInstallReportsTheCrashedSessionAndItsOrphanedSpan() throws {
            for round in 0..<3 {
                let directory = try TemporaryDirectory("facade-orphan")
                defer { directory.remove() }
                let lines = try killChild(mode: "open", directory: directory.url, after: 1)
                #expect(lines == ["ready"])
                let childEvents = try LedgerReader(directory: directory.url).readAll().events
                let childSession = try #require(
                    childEvents.first { $0.kind == .session && $0.name == "start" }?.session)

                Perf.install(
                    Perf.Configuration(directory: directory.url, app: Perf.AppInfo(name: "next"), recording: .enabled),
                    environment: [:], clock: SystemClock(), report: { _ in })
                Perf.shutdown()
                // A second start finds nothing new: recovery was acknowledged.
                Perf.install(
                    Perf.Configuration(directory: directory.url, app: Perf.AppInfo(name: "next"), recording: .enabled),
                    environment: [:], clock: SystemClock(), report: { _ in })
                Perf.shutdown()

                let events = try LedgerReader(directory: directory.url).readAll().events
                let crashed = events.filter { $0.kind == .session && $0.name == "crashed" }
                #expect(crashed.map(\.session) == [childSession], "round \(round)")
                #expect(crashed.first?.extra["app"] == .string("crash-child"))
                let orphaned = events.filter { $0.kind == .span && $0.exit == "orphaned" }
                #expect(orphaned.map(\.name) == ["child.upload"], "round \(round)")
                #expect(orphaned.first?.session == childSession)
                #expect(orphaned.first?.budgetMs == 60_000)
            }
        }

        @Test func aKilledSessionKeepsItsHistogramsAndTimelineInTheReport() throws {
            let directory = try TemporaryDirectory("facade-span-memory")
            defer { directory.remove() }
            let acknowledged = try SpanMemoryCrashTests.killChild(directory: directory.url, threads: 1, after: 300)
            try #require(acknowledged.count >= 300)
            let childSession = try #require(
                try LedgerReader(directory: directory.url).readAll().events
                    .first { $0.kind == .session && $0.name == "start" }?.session)
            Perf.install(
                Perf.Configuration(directory: directory.url, app: Perf.AppInfo(name: "next"), recording: .enabled),
                environment: [:], clock: SystemClock(), report: { _ in })
            Perf.shutdown()

            let bytes = try ReportBuilder(directory: directory.url).build()
            let report = try PerformanceReport(bytes: bytes, path: "report.json")
            // Every span the killed child acknowledged is counted, from its recovered histograms
            // (the spans were under budget: the ledger never saw them).
            let span = try #require(report.spans["mem.span"])
            #expect(span.count >= Int64(acknowledged.count) && span.count <= Int64(acknowledged.count + 1))
            #expect(span.source == .histogram)
            // Its timeline up to the kill: the newest acknowledged span is on it.
            let timeline = try #require(report.intervals.first { $0.session == childSession })
            let newest = try #require(acknowledged.last)
            #expect(
                timeline.flightRecorder.spans.contains {
                    $0.name == "mem.span" && $0.budgetMs == Double(newest.budgetNanos) / 1_000_000
                })
            #expect(timeline.flightRecorder.spans.count >= min(acknowledged.count, SpanMemoryChild.ringCapacity - 16))
            // The span it left open is orphaned with how long it was open at least.
            let events = try LedgerReader(directory: directory.url).readAll().events
            let orphan = try #require(events.first { $0.kind == .span && $0.exit == "orphaned" })
            #expect(orphan.session == childSession && orphan.name == "child.open")
            #expect((orphan.lowerMs ?? 0) > 0)
            let crashed = try #require(events.first { $0.kind == .session && $0.name == "crashed" })
            #expect(crashed.extra["tornRecords"] != nil && crashed.extra["lastAliveMs"] != nil)
            // Acknowledged: the next start finds nothing left of the child.
            #expect(
                !FileManager.default.fileExists(
                    atPath: directory.url.appendingPathComponent("sessions/\(childSession)").path))
        }
    }
}
