// The one JSON scanner: RFC 8259 strictly, errors placed by byte, line and column, and no byte
// sequence that traps or stalls it. The seed is printed on failure; PERF_TEST_SEED replays it.
import Foundation
import PerfCore
import PerfTestSupport
import Testing

@Suite struct JSONScannerTests {
    static func scan(_ text: String, maximumDepth: Int = JSONScanner.defaultMaximumDepth) -> Result<
        JSONScanner, JSONSyntaxError
    > {
        Result { () throws(JSONSyntaxError) in try JSONScanner(Array(text.utf8), maximumDepth: maximumDepth) }
    }

    @Test(arguments: [
        "0", "-0", "1.5e-3", "-12E+4", "0.0", "true", "false", "null", #""""#, "[]", "{}", " \t\r\n[ 1 , 2 ]\n",
        #"{"a":[1,{"b":null}],"c":"\u00e9\ud83d\ude00\/\"\\\b\f\n\r\t"}"#, #"["é€😀"]"#, #"["\ud800"]"#,
        #"{"a":1,"a":2}"#, "[[[[[[[[[[]]]]]]]]]]",
    ])
    func validDocumentsAreAccepted(text: String) throws {
        let scanner = try Self.scan(text).get()
        let bytes = Array(text.utf8)
        bytes.withUnsafeBufferPointer { buffer in
            var end = scanner.valueEnd(buffer, scanner.root)
            JSONScanner.skipSpace(buffer, &end)
            #expect(end == bytes.count, "the root value spans the text: \(text)")
        }
    }

    @Test(
        arguments: [
            ("", .truncated, 1, 1, "ends inside a value"),
            ("[1,]", .trailingComma, 1, 3, "a trailing comma before ']', which JSON does not allow; remove it"),
            ("{\"a\":1 ,\n  }", .trailingComma, 1, 8, "a trailing comma before '}'"),
            ("[1,}", .trailingComma, 1, 3, "before '}'"), ("[,]", .grammar, 1, 2, "expected a value, found ','"),
            ("[1 2]", .grammar, 1, 4, "expected ',' or ']', found '2'"), ("01", .grammar, 1, 1, "leading zero"),
            ("[-]", .grammar, 1, 3, "digits after '-'"), ("1.", .truncated, 1, 3, "a number"),
            ("[1.e3]", .grammar, 1, 4, "digits after '.'"), ("[1e]", .grammar, 1, 4, "exponent"),
            ("[+1]", .grammar, 1, 2, "found '+'"), ("[.5]", .grammar, 1, 2, "found '.'"),
            ("tru", .truncated, 1, 4, "'true'"), ("[nul]", .grammar, 1, 2, "expected a value"),
            (#"{"a"}"#, .grammar, 1, 5, "expected ':'"), ("{1:2}", .grammar, 1, 2, "member name in double quotes"),
            (#"["\x"]"#, .grammar, 1, 3, "not an escape"), (#"["\u12"]"#, .grammar, 1, 3, "four hex digits"),
            ("[\"a\u{1}\"]", .grammar, 1, 4, "raw control character (byte 0x1)"),
            ("[1]]", .grammar, 1, 4, "after the end"),
            ("\n\n  [1,\n ]", .trailingComma, 3, 5, "trailing comma"), ("[\"é\",]", .trailingComma, 1, 5, "trailing"),
            ("{\"a\":\"unterminated", .truncated, 1, 19, "a string"),
        ] as [(String, JSONSyntaxError.Kind, Int, Int, String)])
    func invalidDocumentsArePlaced(text: String, kind: JSONSyntaxError.Kind, line: Int, column: Int, words: String) {
        switch Self.scan(text) {
        case .success: Issue.record("accepted: \(text)")
        case .failure(let error):
            #expect(error.kind == kind, "\(text): \(error)")
            #expect(error.line == line && error.column == column, "\(text): \(error)")
            #expect(error.problem.contains(words), "\(text): \(error)")
            #expect(error.description.hasPrefix("line \(line), column \(column): "))
        }
    }

    @Test func invalidUTF8InAStringIsPlacedAtItsFirstByte() {
        for bad: [UInt8] in [[0xAD], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82]] {
            let bytes = Array(#"{"ab"#.utf8) + bad + Array(#"":1}"#.utf8)
            let result = Result { () throws(JSONSyntaxError) in try JSONScanner(bytes) }
            guard case .failure(let error) = result else {
                Issue.record("accepted \(bad)")
                continue
            }
            #expect(error.kind == .invalidUTF8 && error.offset == 4, "\(bad): \(error)")
        }
    }

    @Test func nestingIsBoundedWithoutRecursingFurther() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        guard case .failure(let error) = Self.scan(deep) else {
            Issue.record("accepted")
            return
        }
        #expect(error.kind == .grammar && error.offset == JSONScanner.defaultMaximumDepth)
        // A value may sit inside `maximumDepth - 1` containers, not `maximumDepth`.
        func inside(_ depth: Int) -> String {
            String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth)
        }
        #expect((try? Self.scan(inside(31), maximumDepth: 32).get()) != nil)
        #expect((try? Self.scan(inside(32), maximumDepth: 32).get()) == nil)
    }

    @Test func surrogateEscapesAreJoinedAndALoneOneIsNoString() throws {
        for (text, expected) in [
            (#""\ud83d\ude00""#, "😀"), (#""\ud800""#, nil), (#""\udc00""#, nil), (#""\ud800\u0041""#, nil),
            (#""a\u0000b""#, "a\u{0}b"), (#""plain é""#, "plain é"),
        ] as [(String, String?)] {
            let bytes = Array(text.utf8)
            _ = try Self.scan(text).get()
            let decoded = bytes.withUnsafeBufferPointer { JSONScanner.string($0, at: 0) }
            #expect(decoded == expected, "\(text)")
        }
    }

    // MARK: Fuzzing

    static let tokens = [
        "{", "}", "[", "]", ",", ":", " ", "\n", "\"k\"", "\"\\u00e9\"", "\"\\ud800\"", "\"\\\"", "0", "-1.5e+3", "01",
        "1.", "true", "fals", "null", "\"é\"", "\\", "\u{1}", "\"", "-", "e", ".",
    ]

    /// A random text: raw bytes, a soup of JSON tokens, or a valid document with bytes changed.
    static func input(_ round: Int, using random: inout SeededRandom) -> [UInt8] {
        switch round % 3 {
        case 0:
            return (0..<Int.random(in: 0...48, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
        case 1:
            let count = Int.random(in: 0...40, using: &random)
            return Array((0..<count).map { _ in tokens.randomElement(using: &random)! }.joined().utf8)
        default:
            var bytes = Array(#"{"a":[1,{"b":null}],"c":"\u00e9x","d":-0.5e3,"e":[true,false,"s"]}"#.utf8)
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[at] = UInt8.random(in: 0...255, using: &random)
                case 1: bytes.remove(at: at)
                default: bytes.insert(Array(",]}\"\\".utf8).randomElement(using: &random)!, at: at)
                }
                if bytes.isEmpty { break }
            }
            return bytes
        }
    }

    /// Whether a number in `bytes` is past Double's range (`-1.5e+3001`): the grammar allows it,
    /// JSONSerialization refuses it, and the package's readers refuse it when they read the value.
    static func hasNumberPastDoubleRange(_ bytes: [UInt8]) -> Bool {
        let numberBytes = Set("0123456789+-.eE".utf8)
        return bytes.split { !numberBytes.contains($0) }.contains { token in
            Double(String(decoding: token, as: UTF8.self))?.isInfinite == true
        }
    }

    /// Random and mutated inputs: the scanner never traps, an error lies inside the text, and
    /// what it accepts JSONSerialization reads too (surrogate escapes aside, which it checks
    /// where the scanner leaves them to the string's reader, and numbers past Double's range,
    /// which the readers refuse as values).
    @Test func randomAndMutatedInputsNeverTrapAndAgreeWithJSONSerialization() {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        var accepted = 0
        var refused = 0
        // 30,000 rounds; fewer where PERF_FUZZ_ROUNDS says (the sanitizer runs: under TSan each
        // round's JSONSerialization check is a thousand times slower, 116 s of its suites' 162).
        let rounds = ProcessInfo.processInfo.environment["PERF_FUZZ_ROUNDS"].flatMap { Int($0) } ?? 30_000
        for round in 0..<rounds {
            let bytes = Self.input(round, using: &random)
            let result = Result { () throws(JSONSyntaxError) in try JSONScanner(bytes, maximumDepth: 8) }
            switch result {
            case .success(let scanner):
                accepted += 1
                #expect(scanner.root <= bytes.count, "seed \(seed)")
                let escaped = bytes.firstRange(of: Array("\\u".utf8)) != nil
                if !escaped, !Self.hasNumberPastDoubleRange(bytes) {
                    let foundation = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
                    #expect(foundation != nil, "seed \(seed): \(String(decoding: bytes, as: UTF8.self))")
                }
            case .failure(let error):
                refused += 1
                #expect(error.offset >= 0 && error.offset <= bytes.count, "seed \(seed): \(error)")
                #expect(error.line >= 1 && error.column >= 1, "seed \(seed): \(error)")
            }
        }
        // Both outcomes well represented: over 100 of each in 30,000 rounds.
        #expect(
            accepted > rounds / 300 && refused > rounds / 300, "seed \(seed): \(accepted) accepted, \(refused) refused")
    }
}
