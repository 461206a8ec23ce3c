// The privacy filter: hostile URLs and strings never leak a host, user info, query or fragment.
import PerfTestSupport
import Testing

@testable import Perf

@Suite struct PrivacyFilterTests {
    @Test(arguments: [
        ("https://u:p@h/p?token=x#f", "/p"),
        ("https%3A%2F%2Fu%3Ap%40h%2Fp%3Ftoken%3Dx%23f", "/p"),
        ("https%253A%252F%252Fh%252Fp%253Ftoken", "/p"),
        ("/v1/threads?page=2", "/v1/threads"),
        ("/v1/threads", "/v1/threads"),
        ("v1/threads#frag", "v1/threads"),
        ("/v1/search%3Fq%3Dsecret", "/v1/search"),
        ("/v1/search%3fq=secret%23x", "/v1/search"),
        ("//cdn.example.com/lib.js", "/lib.js"),
        ("http://h:8080", "/"),
        ("https:\\\\u:p@h\\p?x", "/p"),
        ("HTTPS://H/A/B", "/A/B"),
        ("ftp://user@files.example.com:21/pub/x.tar", "/pub/x.tar"),
        ("user@host.example/p", "/p"),
        ("alice@example.com", ""),
        ("mailto:alice@example.com", ""),
        ("data:text/html;base64,PHNjcmlwdD4=", ""),
        ("javascript:alert(1)", ""),
        ("localhost:8080/admin", ""),
        ("GET https://api.example.com/v1/users?id=7 took long", "GET /v1/users took long"),
        ("timeout after 3 retries", "timeout after 3 retries"),
        ("Error: timeout", "Error: timeout"),
        ("line1\nline2\u{0}x\u{7F}y", "line1 line2 x y"),
        ("a\u{202E}b\u{85}c", "a b c"),
        ("", ""),
    ])
    func hostileExamples(input: String, expected: String) {
        #expect(PrivacyFilter.sanitize(detail: input) == expected)
    }

    @Test func otherStringsAreCutTo128BytesAtAScalarBoundary() {
        let long = String(repeating: "x", count: 300)
        #expect(PrivacyFilter.sanitize(detail: long) == String(repeating: "x", count: 128))
        let accented = "a" + String(repeating: "é", count: 100)
        let cut = PrivacyFilter.sanitize(detail: accented)
        #expect(cut.utf8.count == 127)
        #expect(cut == "a" + String(repeating: "é", count: 63))
        let emoji = String(repeating: "😀", count: 40)
        #expect(PrivacyFilter.sanitize(detail: emoji) == String(repeating: "😀", count: 32))
    }

    /// 100,000 seeded hostile strings built from URL parts with secret markers in every place a
    /// secret can hide: the markers never survive, the output is short and free of controls.
    @Test func fuzzedHostileURLsNeverLeak() {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        var generator = HostileURLGenerator()
        for round in 0..<100_000 {
            let input = generator.make(using: &random)
            let output = PrivacyFilter.sanitize(detail: input)
            let leaked = output.uppercased().contains("SECRET")
            let tooLong = output.utf8.count > PrivacyFilter.maximumBytes
            let controls = output.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
            if leaked || tooLong || controls {
                Issue.record("seed \(seed) round \(round): \(input.debugDescription) -> \(output.debugDescription)")
                return
            }
        }
    }
}

/// Builds strings that mix every way of spelling a URL's separators with secret markers in the
/// user info, host, port, query, fragment and opaque payload positions.
struct HostileURLGenerator {
    private let schemes = ["https", "http", "HTTPS", "ftp", "ws", "git+ssh", "h", "x-custom"]
    private let separators = [
        "://", ":\\\\", ":/\\", "%3A%2F%2F", "%3a//", ":%2F%2F", "%253A%252F%252F", "://///", ":\\/", "%3A%5C%5C",
    ]
    private let schemeless = ["//", "\\\\", "%2F%2F", "%252F%252F", "/\\"]
    private let userInfos = [
        "SECRETUSER@", "SECRETUSER:SECRETPASS@", "SECRETUSER%40", "SECRETUSER%3ASECRETPASS%40", "%53ECRETUSER@",
        "SECRETUSER:SECRETPASS%2540",
    ]
    private let hosts = [
        "SECRETHOST", "SECRETHOST.example.com", "[::SECRETHOST]", "SECRETHOST:8443", "SECRETHOST%3A99",
    ]
    private let pathSegments = ["/", "/v1", "/threads", "/a.b", "/%20x", "/é", "/😀", "/a;b", "/~u", "/:id", "/x@y/z"]
    private let queryMarks = ["?", "%3F", "%3f", "%253F", "%25253F", "??", "?&"]
    private let fragmentMarks = ["#", "%23", "%2523", "#!"]
    private let opaque = [
        "mailto:SECRETUSER@SECRETHOST", "data:text/plain;base64,SECRETDATA", "javascript:SECRETDATA()",
        "tel:SECRETDATA", "urn:isbn:SECRETDATA", "SECRETUSER:SECRETPASS@SECRETHOST/p", "SECRETUSER@SECRETHOST/p",
        "SECRETHOST:8080/p",
    ]
    private let noise = [
        "", " ", "\t", "\n", "\r\n", "\u{0}", "\u{1B}[31m", "\u{7F}", "\u{85}", "\u{202E}", "é", "中文", "%", "%%", "%zz",
        "GET ", " took 3s", "\u{FEFF}",
    ]

    mutating func make(using random: inout SeededRandom) -> String {
        var text = noise.randomElement(using: &random)!
        if Int.random(in: 0..<8, using: &random) == 0 {
            text += opaque.randomElement(using: &random)!
        } else {
            if Bool.random(using: &random) {
                text += schemes.randomElement(using: &random)! + separators.randomElement(using: &random)!
            } else {
                text += schemeless.randomElement(using: &random)!
            }
            if Bool.random(using: &random) { text += userInfos.randomElement(using: &random)! }
            text += hosts.randomElement(using: &random)!
            for _ in 0..<Int.random(in: 0...4, using: &random) { text += pathSegments.randomElement(using: &random)! }
            if Bool.random(using: &random) {
                text += queryMarks.randomElement(using: &random)! + "token=SECRETQUERY&b=SECRETQUERY2"
            }
            if Bool.random(using: &random) { text += fragmentMarks.randomElement(using: &random)! + "SECRETFRAG" }
        }
        text += noise.randomElement(using: &random)!
        if Int.random(in: 0..<4, using: &random) == 0 { text += make(using: &random) }
        return text
    }
}

@Suite struct PrivacyFilterFastPathTests {
    /// The allocation-free fast path may only accept what the full filter leaves unchanged.
    @Test func plainRoutesAreExactlyWhatTheFullFilterKeeps() {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        let alphabet = Array("abcXYZ019/._-~?#:@% \\%2F".utf8)
        var accepted = 0
        for _ in 0..<20_000 {
            let length = Int(random.next() % 40)
            let bytes = (0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
            let text = String(decoding: bytes, as: UTF8.self)
            if PrivacyFilter.isPlainRoute(text) {
                accepted += 1
                #expect(PrivacyFilter.filtered(text) == text, "seed \(seed): \(text)")
            }
        }
        #expect(accepted > 100, "seed \(seed): the generator exercises the fast path")
        #expect(PrivacyFilter.isPlainRoute("/v1/threads"))
        #expect(!PrivacyFilter.isPlainRoute("//host/p"))
        #expect(!PrivacyFilter.isPlainRoute(String(repeating: "a", count: 129)))
    }
}
