// Structure-aware byte mutations for the bad-input scenario, and the real files they start from.
import Foundation
import Glibc
import Perf
import PerfTestSupport

/// Damages a file the way disks, editors, truncated copies and hostile users do: bit flips,
/// JSON-significant bytes, cut and repeated ranges, extreme numbers, deep nesting, huge strings,
/// reordered lines and pieces spliced in from another file.
struct InputMutator {
    private var random: SeededRandom

    init(seed: UInt64) { random = SeededRandom(seed: seed) }

    private mutating func below(_ bound: Int) -> Int { bound <= 0 ? 0 : Int(random.next() % UInt64(bound)) }

    private static let significant = Array("{}[]\",:\\\n0-9eE.tfn ".utf8) + [0x00, 0xFF, 0xC3, 0xE2, 0x80]
    private static let extremes = [
        "1e308", "-1e308", "1e-320", "-0", "18446744073709551616", "-9223372036854775809", "NaN", "Infinity",
        "0.000000001", "99999999999999999999999999999", "\"\"", "null", "true", "[]", "{}",
    ].map { Array($0.utf8) }

    /// One to six mutations of `input`; `donor` supplies foreign pieces to splice in.
    mutating func mutate(_ input: [UInt8], donor: [UInt8]) -> [UInt8] {
        var bytes = input
        for _ in 0..<(1 + below(6)) {
            let at = below(bytes.count + 1)
            switch below(11) {
            case 0 where !bytes.isEmpty:
                bytes[min(at, bytes.count - 1)] ^= UInt8(1) << UInt8(below(8))
            case 1 where !bytes.isEmpty:
                bytes[min(at, bytes.count - 1)] = Self.significant[below(Self.significant.count)]
            case 2:
                bytes.removeSubrange(at..<min(bytes.count, at + 1 + below(64)))
            case 3:
                let start = below(bytes.count + 1)
                bytes.insert(contentsOf: bytes[start..<min(bytes.count, start + 1 + below(256))], at: at)
            case 4:
                bytes.removeSubrange(at...)
            case 5:
                replaceNumber(in: &bytes, from: at)
            case 6:
                let depth = 1 + below(200)
                let open = below(2) == 0 ? UInt8(ascii: "[") : UInt8(ascii: "{")
                bytes.insert(contentsOf: [UInt8](repeating: open, count: depth), at: at)
            case 7:
                bytes.insert(
                    contentsOf: Array("\"".utf8) + [UInt8](repeating: 0x61, count: 1 << (10 + below(8))), at: at)
            case 8:
                swapLines(&bytes)
            case 9 where !donor.isEmpty:
                let start = below(donor.count)
                bytes.insert(contentsOf: donor[start..<min(donor.count, start + 1 + below(512))], at: at)
            default:
                bytes.insert(contentsOf: Self.extremes[below(Self.extremes.count)], at: at)
            }
        }
        return bytes
    }

    /// Overwrites the number that starts at or after `from` with an extreme value.
    private mutating func replaceNumber(in bytes: inout [UInt8], from: Int) {
        let isNumeric: (UInt8) -> Bool = { (0x30...0x39).contains($0) || $0 == UInt8(ascii: "-") }
        guard let start = bytes[from...].firstIndex(where: isNumeric) else { return }
        let end = bytes[start...].firstIndex { !isNumeric($0) && $0 != UInt8(ascii: ".") } ?? bytes.endIndex
        bytes.replaceSubrange(start..<end, with: Self.extremes[below(10)])
    }

    /// Moves one line somewhere else, or repeats it, or drops it.
    private mutating func swapLines(_ bytes: inout [UInt8]) {
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
        guard lines.count > 1 else { return }
        let line = lines.remove(at: below(lines.count))
        switch below(3) {
        case 0: lines.insert(line, at: below(lines.count + 1))
        case 1: lines.insert(contentsOf: [line, line], at: below(lines.count + 1))
        default: break
        }
        bytes = Array(lines.joined(separator: [UInt8(ascii: "\n")]))
    }
}

/// The real files the mutations start from: a demo data directory and its report (from
/// `perf-report demo`), a crashed session's journal (from `perf-test-child session`, SIGKILLed) and the
/// project's budgets file.
struct MutationSeeds {
    let data: URL
    let ledger: [UInt8]
    let payloadName: String?
    let payload: [UInt8]
    let report: [UInt8]
    let budgets: [UInt8]
    let crashedSessions: URL
    let segmentNames: [String]

    init(in scratch: ScratchDirectory, perfReport: String, budgetsPath: String) throws {
        data = scratch.url.appendingPathComponent("demo")
        let reportURL = scratch.url.appendingPathComponent("report.json")
        let demo = try ChildProcess(
            executable: perfReport, arguments: ["demo", "--dir", data.path, "-o", reportURL.path], quiet: true)
        _ = demo.readRemainingLines()
        guard ChildProcess.exitCode(demo.wait()) == 0 else {
            throw ChildProcess.Failure(description: "perf-report demo failed; is \(perfReport) built?")
        }
        ledger = try [UInt8](Data(contentsOf: data.appendingPathComponent(LedgerWriter.fileName)))
        let diagnostics = data.appendingPathComponent("perf-diagnostics")
        payloadName = (try? FileManager.default.contentsOfDirectory(atPath: diagnostics.path))?.sorted().first
        payload = try payloadName.map { try [UInt8](Data(contentsOf: diagnostics.appendingPathComponent($0))) } ?? []
        report = try [UInt8](Data(contentsOf: reportURL))
        budgets = try [UInt8](Data(contentsOf: URL(fileURLWithPath: budgetsPath)))

        crashedSessions = scratch.url.appendingPathComponent("crashed")
        let session = try ChildProcess(
            executable: testChild, arguments: ["session", crashedSessions.path, "fuzzseed0000001"])
        guard session.readLines(until: { $0 == "ready" }, timeoutSeconds: 30) != nil else {
            throw ChildProcess.Failure(description: "child session never became ready")
        }
        session.killAndWait()
        let journal = crashedSessions.appendingPathComponent("sessions/fuzzseed0000001")
        segmentNames = try FileManager.default.contentsOfDirectory(atPath: journal.path).sorted()
    }
}
