// The probes under the system's perf: `perf record` of a program that ends spans of known names and
// durations and hangs once, and `perf-report attach` to a process that keeps running. Needs root,
// perf (Debian linux-perf) and a kernel with uprobe events; skipped with the reason otherwise.
import Foundation
import PerfReportCLI
import PerfTestSupport
import Testing

/// Why perf cannot record uprobes here, or nil when it can.
let probeRecordingUnavailable: String? = {
    guard geteuid() == 0 else { return "not root: uprobes need root" }
    guard probeTool("perf") != nil else { return "perf is not installed (apt-get install linux-perf)" }
    do { try ProbeEvents.requireTracefs() } catch { return "\(error)" }
    return nil
}()

@Suite(.serialized) struct ProbeRecordTests {
    /// scripts/validate-probes.sh points these at the release build.
    static let child = ProcessInfo.processInfo.environment["PERF_PROBES_CHILD"] ?? BuildProducts.testChild
    static let report =
        ProcessInfo.processInfo.environment["PERF_PROBES_REPORT"] ?? BuildProducts.executable("perf-report")

    @Test(.enabled(if: probeRecordingUnavailable == nil, "\(probeRecordingUnavailable ?? "")"))
    func perfRecordSeesTheSpansAndTheHangTheProgramMade() throws {
        let perf = try #require(probeTool("perf"))
        let directory = try TemporaryDirectory("probes")
        defer { directory.remove() }
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.child)))
        let sites = try ProbeNotes.sites(in: bytes, path: Self.child)
        let events = try ProbeEvents(sites: sites, executable: Self.child, group: "perf_test_\(getpid())")
        defer { events.remove() }
        let data = directory.url.appendingPathComponent("perf.data").path
        // perf record runs the child; the child's JSON lines come through perf's stdout.
        let run = try ChildProcess.run(
            perf, ["record", "-q", "-o", data, "-e", "\(events.group):*", "--", Self.child, "probes"],
            timeoutSeconds: 30)
        #expect(ChildProcess.exitCode(run.status) == 0, "perf record: \(ChildProcess.describe(run.status))")
        let truth = run.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let text = try ProbeAttach.run(
            perf, ["script", "-i", data, "-F", "pid,tid,time,event,trace", "--ns"], what: "perf script")
        #expect(!text.contains("connection-secret"), "a key never reaches a probe")
        #expect(!text.contains("never in a probe"), "a note's detail never reaches a probe")
        let hits = ProbeScript.hits(text, group: events.group, probeOfEvent: events.probeOfEvent)

        // Every span the child ended, by name: the same count, each duration within 1 % of the
        // bounds the program measured: inside the span (`ns`) and around its begin and end
        // (`outerNs`, where a preemption between Perf's clock read and the program's lands: one of
        // 66 µs put a 2 ms span 3.3 % over `ns` in a loaded suite run).
        var expected: [String: [(inner: Int64, outer: Int64)]] = [:]
        for line in truth {
            guard let name = line["span"] as? String, let ns = line["ns"] as? Int64 else { continue }
            expected[name, default: []].append((ns, line["outerNs"] as? Int64 ?? ns))
        }
        var recorded: [String: [Int64]] = [:]
        var over: [String: Int] = [:]
        for hit in hits where hit.probe == "span_end" {
            recorded[hit.arguments["name"] ?? "?", default: []].append(hit.number("ns"))
            over[hit.arguments["name"] ?? "?", default: 0] += Int(hit.number("over"))
        }
        #expect(Set(recorded.keys) == Set(expected.keys), "recorded \(recorded.keys.sorted())")
        for (name, durations) in expected where name != "probe.keyed" {
            let got = recorded[name, default: []]
            #expect(got.count == durations.count, "\(name): \(got.count) hits for \(durations.count) spans")
            for (probe, truth) in zip(got, durations) {
                #expect(
                    Double(probe) >= 0.99 * Double(truth.inner) && Double(probe) <= 1.01 * Double(truth.outer),
                    "\(name): probe \(probe) ns, program \(truth.inner) ns inside, \(truth.outer) ns around")
            }
        }
        // The keyed span: one begin (its name, never its key) and one end.
        #expect(hits.filter { $0.probe == "span_begin" }.map { $0.arguments["name"] } == ["probe.keyed"])
        #expect(recorded["probe.keyed"]?.count == 1)
        #expect(over["probe.slow"] == 3 && over["probe.short"] == 0 && over["probe.unbudgeted"] == 0)
        #expect(hits.filter { $0.probe == "note" }.map { $0.arguments["name"] } == ["probe.note"])
        let hangs = hits.filter { $0.probe == "hang" }
        #expect(hangs.count == 1, "one hang probe hit: \(hangs)")
        #expect(hangs.first?.arguments["target"] == "probe.watched")
        #expect(hangs.first?.arguments["culprit"]?.contains("stallWatchedQueue") == true, "\(hangs)")
        #expect((hangs.first?.number("lower_ms") ?? 0) >= 250)
        #expect(hits.filter { $0.probe == "session_start" }.count == 1)
        #expect(hits.filter { $0.probe == "session_end" }.count == 1)
    }

    @Test(.enabled(if: probeRecordingUnavailable == nil, "\(probeRecordingUnavailable ?? "")"))
    func attachRecordsALiveProcessThatKeepsRunning() throws {
        let child = try ChildProcess(
            executable: Self.child, arguments: ["probes", "forever", "work=100"], withStandardInput: true)
        defer { child.killAndWait() }
        let ready = try #require(child.readLine(timeoutSeconds: 20))
        #expect(ready.hasPrefix("{\"ready\":"))
        func rates(_ count: Int) -> [Int] {
            (0..<count).compactMap { _ in
                child.readLine(timeoutSeconds: 10).flatMap { line in
                    (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Int])?["rate"]
                }
            }
        }
        let before = rates(4)
        let directory = try TemporaryDirectory("attach")
        defer { directory.remove() }
        let trace = directory.url.appendingPathComponent("trace.json")
        // perf-report runs while this thread keeps reading the child's rates (its pipe must not fill).
        let attach = try ChildProcess(
            executable: Self.report,
            arguments: ["attach", "--pid", String(child.pid), "--seconds", "2", "-o", trace.path], quiet: true)
        var during: [Int] = []
        var summary: [String] = []
        while !attach.reachedEndOfFile, during.count < 200 {
            during += rates(1)
            while let line = attach.readLine(timeoutSeconds: 0.01) { summary.append(line) }
        }
        #expect(ChildProcess.exitCode(attach.wait()) == 0)
        let after = rates(4)
        #expect(after.count == 4 && kill(child.pid, 0) == 0, "the child keeps running after the attach")
        print("probes forever work=100: spans/s before \(before), during attach \(during), after \(after)")

        let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: trace)) as? [String: Any])
        let events = try #require(document["traceEvents"] as? [[String: Any]])
        let spans = events.filter { $0["ph"] as? String == "X" && $0["name"] as? String == "probe.tick" }
        #expect(spans.count > 100, "\(spans.count) span events in 2 s")
        let line = try #require(summary.first { $0.hasPrefix("probe.tick") }, "\(summary)")
        #expect(line.split(separator: " ").dropFirst().first.flatMap { Int($0) } == spans.count)
        // The uprobes are gone again.
        let defined = (try? String(contentsOfFile: "/sys/kernel/tracing/uprobe_events", encoding: .utf8)) ?? ""
        #expect(!defined.contains("perf_attach_\(child.pid)/"))
        child.closeStandardInput()
    }
}
