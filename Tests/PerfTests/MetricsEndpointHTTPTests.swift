// The metrics endpoint's request-head parser as a pure function: the answers the issue names, the
// 8 KiB limit, and a seeded fuzz of 12,000 hostile inputs (truncated requests, huge headers,
// binary garbage, CR/LF variants, NULs) that must always give an answer or "need more", never a
// crash, with the answer fixed once the head is complete.
import PerfTestSupport
import Testing

@testable import Perf

typealias MetricsHTTP = Perf.MetricsEndpoint.HTTP

func metricsAnswer(_ bytes: [UInt8], limit: Int = 8192, atEnd: Bool = false) -> MetricsHTTP.Answer? {
    bytes.withUnsafeBufferPointer { MetricsHTTP.answer(to: $0, limit: limit, atEnd: atEnd) }
}

func metricsAnswer(_ text: String, atEnd: Bool = false) -> MetricsHTTP.Answer? {
    metricsAnswer(Array(text.utf8), atEnd: atEnd)
}

@Suite struct MetricsEndpointHTTPTests {
    @Test func getAndHeadOfMetricsAreServed() {
        #expect(metricsAnswer("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n") == .init(status: .ok))
        #expect(metricsAnswer("HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n") == .init(status: .ok, headersOnly: true))
        #expect(metricsAnswer("GET /metrics HTTP/1.0\r\n\r\n") == .init(status: .ok))
        #expect(metricsAnswer("GET /metrics?name[]=perf_span HTTP/1.1\r\nHost: x\r\n\r\n") == .init(status: .ok))
        #expect(metricsAnswer("GET http://127.0.0.1:9464/metrics HTTP/1.1\r\nHost: x\r\n\r\n") == .init(status: .ok))
        // Bare LF line ends, a leading empty line, header whitespace, and a body that is ignored.
        #expect(metricsAnswer("GET /metrics HTTP/1.1\nHost: x\n\n") == .init(status: .ok))
        #expect(
            metricsAnswer("\r\nGET /metrics HTTP/1.1\r\nHost:x\r\nAccept:  */* \t\r\n\r\nbody") == .init(status: .ok))
    }

    @Test func otherPathsMethodsVersionsAndShapesGetTheirStatus() {
        let notFound = ["GET / HTTP/1.1", "GET /metrics/ HTTP/1.1", "GET /Metrics HTTP/1.1", "GET * HTTP/1.1"]
        for line in notFound { #expect(metricsAnswer(line + "\r\nHost: x\r\n\r\n")?.status == .notFound, "\(line)") }
        #expect(metricsAnswer("HEAD /x HTTP/1.1\r\nHost: x\r\n\r\n") == .init(status: .notFound, headersOnly: true))
        for method in ["POST", "PUT", "DELETE", "OPTIONS", "get", "PATCH"] {
            #expect(metricsAnswer("\(method) /metrics HTTP/1.1\r\nHost: x\r\n\r\n")?.status == .methodNotAllowed)
        }
        #expect(metricsAnswer("GET /metrics HTTP/2.0\r\n\r\n")?.status == .versionNotSupported)
        #expect(metricsAnswer("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")?.status == .versionNotSupported)
        let malformed = [
            "GET /metrics HTTP/1.1\r\n\r\n",  // HTTP/1.1 without Host
            "GET /metrics HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",  // two Hosts
            "GET  /metrics HTTP/1.1\r\nHost: x\r\n\r\n",  // two spaces
            "GET /metrics\r\n\r\n",  // HTTP/0.9 shape
            "GET /metrics HTTP/1.1 \r\nHost: x\r\n\r\n",
            "GET /metrics HTTP/1.10\r\nHost: x\r\n\r\n",
            "GET /met rics HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /metrics HTTP/1.1\r\nHost : x\r\n\r\n",  // space before the colon
            "GET /metrics HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n",  // obsolete line folding
            "GET /metrics HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n",
            "GET /metrics HTTP/1.1\r\nHost: x\0\r\n\r\n",  // NUL in a value
            "GET /metrics HTTP/1.1\r\nHost: x\ry\r\n\r\n",  // bare CR
            "G\0T /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
            "\u{FF}\u{FE} /metrics HTTP/1.1\r\n\r\n",
        ]
        for text in malformed { #expect(metricsAnswer(text)?.status == .badRequest, "\(text.debugDescription)") }
    }

    @Test func incompleteHeadsWaitAndEndOfInputEndsThem() {
        for text in ["", "G", "GET /metrics HTTP/1.1", "GET /metrics HTTP/1.1\r\nHost: x\r\n", "\r\n\r\n"] {
            #expect(metricsAnswer(text) == nil, "\(text.debugDescription)")
        }
        #expect(metricsAnswer("GET /metrics HTTP/1.1\r\nHost: x\r\n", atEnd: true)?.status == .badRequest)
        #expect(metricsAnswer("", atEnd: true) == nil)
        #expect(metricsAnswer(String(repeating: "\r\n", count: 20))?.status == .badRequest)
    }

    @Test func theHeadLimitIsEightKibibytes() {
        let request = "GET /metrics HTTP/1.1\r\nHost: x\r\n"
        func padded(toHead size: Int) -> [UInt8] {
            let filler = size - request.utf8.count - "X: \r\n\r\n".utf8.count
            return Array((request + "X: " + String(repeating: "a", count: filler) + "\r\n\r\n").utf8)
        }
        #expect(padded(toHead: 8192).count == 8192)
        #expect(metricsAnswer(padded(toHead: 8192))?.status == .ok)
        #expect(metricsAnswer(padded(toHead: 8193))?.status == .headTooLarge)
        // No end of head in the first 8 KiB + 1 byte: answered without waiting for more.
        #expect(metricsAnswer(Array(padded(toHead: 9000).prefix(8193)))?.status == .headTooLarge)
        #expect(metricsAnswer(Array(padded(toHead: 9000).prefix(8192))) == nil)
        #expect(metricsAnswer([UInt8](repeating: 0, count: 8193))?.status == .headTooLarge)
    }

    @Test func responsesCarryLengthTypeAndClose() throws {
        let body = Array("perf_up 1\n".utf8)
        let ok = try #require(LoopbackHTTPResponse(MetricsHTTP.response(.init(status: .ok)) { body }))
        #expect(ok.status == 200 && ok.body == body)
        #expect(ok.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
        #expect(ok.headers["content-length"] == "\(body.count)" && ok.headers["connection"] == "close")
        let head = MetricsHTTP.response(.init(status: .ok, headersOnly: true)) { body }
        let headers = try #require(LoopbackHTTPResponse(head, headersOnly: true))
        #expect(headers.headers["content-length"] == "\(body.count)" && headers.body.isEmpty)
        var called = false
        let notAllowed = try #require(
            LoopbackHTTPResponse(
                MetricsHTTP.response(.init(status: .methodNotAllowed)) {
                    called = true; return []
                }))
        #expect(!called && notAllowed.status == 405 && notAllowed.headers["allow"] == "GET, HEAD")
    }

    /// The RunningInProduction article states the limits the endpoint has and quotes its error.
    @Test func articleStatesTheLimitsAndQuotesTheStartError() throws {
        let article = try PackageDocument.text(PackageDocument.perfArticle("RunningInProduction"))
        let limits = Perf.MetricsEndpoint.Limits()
        #expect(article.contains("| connections at once | \(limits.maxConnections) "))
        let head = limits.maxRequestHeadBytes / 1024
        #expect(article.contains("| request head (request line and headers) | \(head) KiB "))
        #expect(article.contains("| time to send the request head | \(limits.readTimeout.components.seconds) s "))
        #expect(article.contains("| time to take the answer | \(limits.readTimeout.components.seconds) s |"))
        let inUse = Perf.MetricsEndpoint.StartError(host: "127.0.0.1", port: 9464, reason: .addressInUse)
        #expect(article.contains("\n" + inUse.description + "\n"))
        #expect(
            article.contains(
                "let metrics = try Perf.MetricsEndpoint.start()" + String(repeating: " ", count: 24)
                    + "// 127.0.0.1:9464"))
    }

    /// 12,000 seeded cases. Every input gets an answer or "need more"; more than the limit, or the
    /// end of input after some bytes, always an answer; a well-formed GET or HEAD is served;
    /// bytes after a complete head never change its answer.
    @Test func fuzzedHeadsAlwaysGetAnAnswerOrWait() {
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        var answered = 0
        var statuses: [Int: Int] = [:]
        var failures: [String] = []
        func check(_ condition: Bool, _ index: Int, _ bytes: [UInt8], _ what: @autoclosure () -> String) {
            if !condition && failures.count < 10 { failures.append("case \(index): \(what()): \(bytes.debugText)") }
        }
        let started = monotonicSeconds()
        for index in 0..<12_000 {
            let (bytes, expected) = MetricsFuzz.input(&random)
            let answer = metricsAnswer(bytes)
            if let expected {
                check(answer == expected, index, bytes, "\(String(describing: answer)), not \(expected)")
            }
            if bytes.count > 8192 { check(answer != nil, index, bytes, "over the limit, no answer") }
            if !bytes.isEmpty { check(metricsAnswer(bytes, atEnd: true) != nil, index, bytes, "no answer at the end") }
            guard let answer else { continue }
            answered += 1
            statuses[answer.status.rawValue, default: 0] += 1
            let tail = MetricsFuzz.garbage(&random, maxCount: 64)
            check(metricsAnswer(bytes + tail) == answer, index, bytes, "bytes after the head changed \(answer)")
            let response = MetricsHTTP.response(answer) { [] }
            check(response.starts(with: Array("HTTP/1.1 \(answer.status.rawValue) ".utf8)), index, bytes, "status line")
        }
        #expect(failures.isEmpty, "seed \(seed): \(failures.joined(separator: "\n"))")
        print(
            "fuzzedHeadsAlwaysGetAnAnswerOrWait: 12,000 cases in \(monotonicSeconds() - started) s, \(answered) answered, "
                + "statuses \(statuses.sorted { $0.key < $1.key })")
        #expect(statuses[200, default: 0] > 500 && statuses[400, default: 0] > 500 && statuses[431, default: 0] > 50)
    }
}

extension [UInt8] {
    /// The first bytes of an input, printable, for a failure message.
    var debugText: String { String(decoding: prefix(200), as: UTF8.self).debugDescription + " (\(count) bytes)" }
}

/// Hostile request heads, from one seeded generator; shared by the parser and socket fuzz tests.
enum MetricsFuzz {
    static let methods = ["GET", "HEAD", "POST", "get", "G ET", "", "\0", "OPTIONS", "CONNECT", "GETT"]
    static let targets = ["/metrics", "/metrics?x=1", "/", "*", "/metrics/../x", "http://h/metrics", "", "/m\u{0}"]
    static let versions = ["HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTP/1.", "http/1.1", "HTTP/11", "", "HTTP/1.1 "]
    static let lineEnds = ["\r\n", "\n", "\r", "\r\r\n", "\n\r", "\r\n "]

    /// One input, and the answer it must get when it is certain (a well-formed GET or HEAD).
    static func input(_ random: inout SeededRandom) -> (bytes: [UInt8], expected: MetricsHTTP.Answer?) {
        switch random.next() % 10 {
        case 0, 1:
            let head = random.next() % 2 == 0
            let request = "\(head ? "HEAD" : "GET") /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: */*\r\n\r\n"
            return (Array(request.utf8), .init(status: .ok, headersOnly: head))
        case 2:  // a valid request cut short
            let request = Array("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
            return (Array(request.prefix(Int(random.next() % UInt64(request.count)))), nil)
        case 3:  // huge headers, around the limit
            let size = 7_000 + Int(random.next() % 3_000)
            let request =
                "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "b", count: size) + "\r\n\r\n"
            return (Array(request.utf8), request.utf8.count > 8192 ? .init(status: .headTooLarge) : .init(status: .ok))
        case 4: return (garbage(&random, maxCount: 2_048), nil)
        case 5:  // assembled from parts, some wrong
            let end = pick(lineEnds, &random)
            var text = "\(pick(methods, &random)) \(pick(targets, &random)) \(pick(versions, &random))\(end)"
            for _ in 0..<(random.next() % 6) { text += "H\(random.next() % 9): v\(pick(lineEnds, &random))" }
            return (Array((text + end + end).utf8), nil)
        case 6:  // a valid request with bytes flipped, inserted or removed
            var bytes = Array("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
            for _ in 0...(random.next() % 4) { mutate(&bytes, &random) }
            return (bytes, nil)
        case 7:  // NULs and control bytes sprinkled in
            var bytes = Array("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
            let position = Int(random.next() % UInt64(bytes.count - 4))
            bytes.insert(UInt8(random.next() % 32), at: position)
            return (bytes, nil)
        case 8:  // many small headers
            var text = "GET /metrics HTTP/1.1\r\nHost: x\r\n"
            for index in 0..<(random.next() % 600) { text += "X-\(index): \(index)\r\n" }
            let bytes = Array((text + "\r\n").utf8)
            return (bytes, bytes.count > 8192 ? .init(status: .headTooLarge) : .init(status: .ok))
        default:  // leading blank lines and line-end variants
            let end = pick(lineEnds, &random)
            let blanks = String(repeating: pick(["\r\n", "\n"], &random), count: Int(random.next() % 12))
            return (Array((blanks + "GET /metrics HTTP/1.0" + end + end).utf8), nil)
        }
    }

    static func garbage(_ random: inout SeededRandom, maxCount: Int) -> [UInt8] {
        (0..<Int(random.next() % UInt64(maxCount + 1))).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }

    static func pick(_ choices: [String], _ random: inout SeededRandom) -> String {
        choices[Int(random.next() % UInt64(choices.count))]
    }

    static func mutate(_ bytes: inout [UInt8], _ random: inout SeededRandom) {
        let position = Int(random.next() % UInt64(bytes.count))
        let byte = UInt8(truncatingIfNeeded: random.next())
        switch random.next() % 3 {
        case 0: bytes[position] = byte
        case 1: bytes.insert(byte, at: position)
        default: if bytes.count > 1 { bytes.remove(at: position) }
        }
    }
}
