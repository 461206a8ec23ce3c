// Privacy at scale: fuzzed URLs with a marker in every secret position go through every facade
// entry that takes free text (span ends, keyed ends, notes, failure reasons); no marker may reach
// any file of the data directory or the report built from it.
import Foundation
import Perf
import PerfTestSupport

enum ReliabilityPrivacy {
    /// Every secret position carries a marker ending in this; paths and noise never contain it.
    static let marker = Array("SECRET".utf8)

    static func run(strings: Int, seed: UInt64) throws -> ScenarioResult {
        let scratch = try ScratchDirectory("privacy")
        defer { scratch.remove() }
        Perf.install(
            Perf.Configuration(
                directory: scratch.url, app: Perf.AppInfo(name: "privacy"), recording: .enabled,
                ledgerCapBytes: 256 << 20, noteFloorSeconds: 0))
        var fuzzer = SecretURLFuzzer(seed: seed)
        var inputs: [String] = []
        inputs.reserveCapacity(strings)
        for index in 0..<strings {
            let input = fuzzer.make()
            inputs.append(input)
            switch index % 4 {
            case 0:
                Perf.begin("privacy.span", slowMs: 0).end(detail: input, count: index)
            case 1:
                // The key carries a marker too: keys are never written anywhere.
                Perf.begin(key: "KEYSECRET-\(index)", "privacy.keyed", slowMs: 0)
                Perf.end(key: "KEYSECRET-\(index)", detail: input, count: index)
            case 2:
                Perf.note("privacy.note", detail: input)
            default:
                Perf.begin("privacy.failure", slowMs: 0).end(exit: .failure, reason: input)
            }
        }
        // Scanned while the session is live too: its journal is deleted at a clean shutdown.
        let live = try scan(directory: scratch.url)
        Perf.shutdown()
        let report = try ReportBuilder(directory: scratch.url, capBytes: 512 << 20).build()
        var files = try scan(directory: scratch.url)
        files.scanned += live.scanned + 1
        files.bytes += live.bytes + report.count
        files.leaks += live.leaks + occurrences(in: report)
        let (events, _) = try LedgerReader(directory: scratch.url).readAll()
        let details = events.compactMap { $0.detail }
        let overlong = details.filter { $0.utf8.count > PrivacyFilter.maximumBytes }.count
        let controls = details.filter { $0.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } }.count
        // The same scanner over the inputs: proof it finds the markers it is looking for.
        let planted = inputs.reduce(0) { $0 + occurrences(in: Array($1.utf8)) }
        let leaking = events.first { ($0.detail.map { occurrences(in: Array($0.utf8)) } ?? 0) > 0 }
        var notes = "seed \(seed); markers in user info, password, host, query, fragment and keyed-span keys, "
        notes += "percent-encoded up to 3 times, glued and wrapped in controls and noise; every file scanned "
        notes += "before and after shutdown (session journal, ledger, diagnostics) plus the built report: "
        notes += "\(files.bytes) bytes, also after percent-decoding"
        if let leaking, let index = leaking.count, index < inputs.count {
            notes += "; first leak: \(inputs[index].debugDescription) -> \(leaking.detail ?? "")"
        }
        return ScenarioResult(
            scenario: "Privacy",
            done: "\(strings) fuzzed URLs and strings as `detail`/`reason` (spans, keyed spans, notes, failures); "
                + "\(events.count) ledger lines, \(files.scanned) file scans",
            target: "0 leaks of query, fragment, user info or host into any file",
            result: "\(files.leaks) leaks (of \(planted) markers planted); \(overlong) details over 128 bytes; "
                + "\(controls) with control characters",
            pass: files.leaks == 0 && overlong == 0 && controls == 0 && files.scanned > 1 && planted > strings,
            notes: notes,
            counts: [
                "strings": Double(strings), "lines": Double(events.count), "files": Double(files.scanned),
                "leaks": Double(files.leaks), "planted": Double(planted),
            ])
    }

    private struct Scan {
        var scanned = 0
        var leaks = 0
        var bytes = 0
    }

    /// Every regular file under `directory`: ledger, rotated ledger, session journals, diagnostics.
    private static func scan(directory: URL) throws -> Scan {
        var result = Scan()
        let manager = FileManager.default
        for path in try manager.subpathsOfDirectory(atPath: directory.path) {
            let url = directory.appendingPathComponent(path)
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue else {
                continue
            }
            let bytes = try [UInt8](Data(contentsOf: url))
            result.scanned += 1
            result.bytes += bytes.count
            result.leaks += occurrences(in: bytes)
        }
        return result
    }

    /// Markers in `bytes` as written and after percent-decoding until nothing changes, so an
    /// encoded secret that slipped through is found too.
    static func occurrences(in bytes: [UInt8]) -> Int {
        var text = bytes
        var found = count(in: text)
        while true {
            let decoded = decodedOnce(text)
            guard decoded != text else { return found }
            text = decoded
            found = max(found, count(in: text))
        }
    }

    private static func count(in bytes: [UInt8]) -> Int {
        guard bytes.count >= marker.count else { return 0 }
        var found = 0
        var index = 0
        while index <= bytes.count - marker.count {
            if bytes[index] == marker[0], bytes[index..<(index + marker.count)].elementsEqual(marker) {
                found += 1
                index += marker.count
            } else {
                index += 1
            }
        }
        return found
    }

    private static func decodedOnce(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                let value = UInt8(String(decoding: bytes[(index + 1)...(index + 2)], as: UTF8.self), radix: 16)
            {
                output.append(value)
                index += 3
            } else {
                output.append(bytes[index])
                index += 1
            }
        }
        return output
    }
}

/// Builds hostile details: URLs whose user info, password, host, query and fragment hold a
/// `…SECRET` marker, with separators and markers percent-encoded at random depths, several URLs
/// glued together, and text, controls and invisible characters around them; one input in ten is
/// marker-free free text (random scalars) that only has to come out short and clean.
struct SecretURLFuzzer {
    private var random: SeededRandom

    init(seed: UInt64) { random = SeededRandom(seed: seed) }

    private mutating func roll(_ sides: Int) -> Int { Int(random.next() % UInt64(sides)) }

    private mutating func any(_ choices: [String]) -> String { choices[roll(choices.count)] }

    mutating func make() -> String {
        switch roll(10) {
        case 0: return freeText()
        case 1: return wrapped(url() + any(["", " ", ",", "|", "\n", "\t", ";"]) + url())
        default: return wrapped(url())
        }
    }

    private mutating func url() -> String {
        var text = ""
        switch roll(4) {
        case 0: text += any(["//", "\\\\", "/\\"])
        case 1: text += any(["mailto:", "git+ssh:", "x-y.z:"]) + "//"
        default: text += scheme() + any(["://", ":\\\\", ":/\\", ":////", ":\\/"])
        }
        if roll(2) == 0 {
            text += "USR" + any(["SECRET", "SECRET.name", "SECRET%00"])
            if roll(2) == 0 { text += ":" + any(["PWDSECRET", "p@PWDSECRET", "PWDSECRET:x"]) }
            text += "@"
        }
        text += any(["HSTSECRET", "api.HSTSECRET.example", "[fe80::1%25HSTSECRET]", "HSTSECRET.local", "xn--HSTSECRET"])
        if roll(3) == 0 { text += ":" + String(roll(65_536)) }
        for _ in 0..<roll(5) { text += "/" + pathSegment() }
        if roll(2) == 0 { text += any(["?", "??", "?&", "/?"]) + "q=QRYSECRET&page=" + String(roll(9)) }
        if roll(2) == 0 { text += any(["#", "#!", "#/"]) + "FRGSECRET" }
        return encoded(text)
    }

    private mutating func scheme() -> String {
        let letters = Array("abcdefghijklmnopqrstuvwxyzHTPS")
        return String((0..<(1 + roll(8))).map { _ in letters[roll(letters.count)] })
    }

    /// Path segments only ever hold harmless text: what the filter is allowed to keep.
    private mutating func pathSegment() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789._~-")
        var segment = String((0..<roll(12)).map { _ in alphabet[roll(alphabet.count)] })
        if roll(6) == 0 { segment += any(["é", "😀", ";v=1", ":id", "%20x", "+", "=", "'"]) }
        return segment
    }

    /// Percent-encodes a random share of the bytes, some of them two or three times over.
    private mutating func encoded(_ text: String) -> String {
        let share = roll(4)
        guard share > 0 else { return text }
        var output = ""
        for byte in text.utf8 {
            guard roll(8) < share else {
                output.unicodeScalars.append(Unicode.Scalar(byte))
                continue
            }
            var piece = String(format: roll(2) == 0 ? "%%%02X" : "%%%02x", byte)
            for _ in 0..<roll(3) { piece = piece.replacingOccurrences(of: "%", with: "%25") }
            output += piece
        }
        // Non-ASCII bytes appended one by one above would be mangled: keep such inputs as given.
        return text.utf8.allSatisfy({ $0 < 0x80 }) ? output : text
    }

    private mutating func wrapped(_ url: String) -> String {
        let noise = [
            "", "", " ", "GET ", "POST\t", "\n", "\r\n", "\u{0}", "\u{1B}[2J", "\u{7F}", "\u{85}", "\u{2028}",
            "\u{202E}", "\u{FEFF}", "中文 ", "took 3 s", "(", ")", "\"", "<", ">",
        ]
        return any(noise) + url + any(noise)
    }

    private mutating func freeText() -> String {
        var scalars = String.UnicodeScalarView()
        for _ in 0..<roll(300) {
            let value = UInt32(roll(4) == 0 ? roll(0x11_0000) : roll(0x80))
            if let scalar = Unicode.Scalar(value) { scalars.append(scalar) }
        }
        return String(scalars)
    }
}
