// The metrics endpoint's HTTP: a pure function from the bytes a client sent to the answer, and the
// bytes of that answer. Only the request line and headers are read (HTTP/1.0 and 1.1, RFC 9112);
// a body is never read, and every answer closes the connection.
import Glibc

extension Perf.MetricsEndpoint {
    enum HTTP {
        /// The statuses the endpoint answers with.
        enum Status: Int, Sendable {
            case ok = 200
            case badRequest = 400
            case notFound = 404
            case methodNotAllowed = 405
            case requestTimeout = 408
            case headTooLarge = 431
            case versionNotSupported = 505

            var reason: String {
                switch self {
                case .ok: return "OK"
                case .badRequest: return "Bad Request"
                case .notFound: return "Not Found"
                case .methodNotAllowed: return "Method Not Allowed"
                case .requestTimeout: return "Request Timeout"
                case .headTooLarge: return "Request Header Fields Too Large"
                case .versionNotSupported: return "HTTP Version Not Supported"
                }
            }
        }

        /// What to answer: a status, and whether the answer has headers only (a HEAD request).
        struct Answer: Equatable, Sendable {
            var status: Status
            var headersOnly = false

            /// `GET /metrics` (or HEAD): the exposition.
            var servesMetrics: Bool { status == .ok }
        }

        /// Leading empty lines tolerated before the request line (RFC 9112 §2.2 asks for one).
        static let leadingBlankBytes = 16

        /// The answer to what a client sent so far, or nil while the head is incomplete and may
        /// still fit in `limit` bytes. `atEnd`: the client closed its side, nothing more comes.
        ///
        /// Total: any bytes give an answer or nil, and more than `limit` bytes always an answer.
        static func answer(to bytes: UnsafeBufferPointer<UInt8>, limit: Int, atEnd: Bool = false) -> Answer? {
            var start = 0
            while start < bytes.count, bytes[start] == cr || bytes[start] == lf {
                start += 1
                if start > leadingBlankBytes { return Answer(status: .badRequest) }
            }
            // Lines up to the first empty one: (start, end) without the LF and a CR before it.
            var lines: [Range<Int>] = []
            var lineStart = start
            var headEnd: Int?
            while lineStart < bytes.count, let base = bytes.baseAddress,
                let found = memchr(base + lineStart, Int32(lf), bytes.count - lineStart)
            {
                let index = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                let end = index > lineStart && bytes[index - 1] == cr ? index - 1 : index
                if end == lineStart {
                    headEnd = index + 1
                    break
                }
                lines.append(lineStart..<end)
                lineStart = index + 1
            }
            guard let headEnd else {
                if bytes.count > limit { return Answer(status: .headTooLarge) }
                if atEnd && bytes.count > 0 { return Answer(status: .badRequest) }
                return nil
            }
            if headEnd > limit { return Answer(status: .headTooLarge) }
            return answer(lines: lines, in: bytes)
        }

        /// The answer to a complete head: its request line, then its header lines.
        private static func answer(lines: [Range<Int>], in bytes: UnsafeBufferPointer<UInt8>) -> Answer {
            guard let requestLine = lines.first, let request = RequestLine(bytes, requestLine) else {
                return Answer(status: .badRequest)
            }
            let headersOnly = request.method == "HEAD"
            guard request.major == 1 else { return Answer(status: .versionNotSupported, headersOnly: headersOnly) }
            var hosts = 0
            for line in lines.dropFirst() {
                guard let isHost = headerIsHost(bytes, line) else { return Answer(status: .badRequest) }
                if isHost { hosts += 1 }
            }
            // RFC 9112 §3.2: an HTTP/1.1 request has exactly one Host.
            if (request.minor >= 1 && hosts != 1) || hosts > 1 { return Answer(status: .badRequest) }
            guard request.path == "/metrics" else { return Answer(status: .notFound, headersOnly: headersOnly) }
            guard request.method == "GET" || headersOnly else { return Answer(status: .methodNotAllowed) }
            return Answer(status: .ok, headersOnly: headersOnly)
        }

        /// `method SP request-target SP HTTP/d.d`, single spaces, nothing else.
        struct RequestLine {
            var method: String
            var path: String
            var major: Int
            var minor: Int

            init?(_ bytes: UnsafeBufferPointer<UInt8>, _ line: Range<Int>) {
                // Index loops on the buffer: a debug build runs these per byte of every head.
                var method = line.lowerBound
                while method < line.upperBound, isTokenByte(bytes[method]) { method += 1 }
                guard method > line.lowerBound, method < line.upperBound, bytes[method] == space else { return nil }
                var target = method + 1
                while target < line.upperBound, bytes[target] > space, bytes[target] < 0x7F { target += 1 }
                guard target > method + 1, target < line.upperBound, bytes[target] == space else { return nil }
                let version = (target + 1)..<line.upperBound
                guard version.count == 8, Array(bytes[version.prefix(5)]) == Array("HTTP/".utf8),
                    bytes[version.lowerBound + 6] == UInt8(ascii: "."),
                    let major = digit(bytes[version.lowerBound + 5]),
                    let minor = digit(bytes[version.lowerBound + 7])
                else { return nil }
                self.method = String(decoding: bytes[line.lowerBound..<method], as: UTF8.self)
                path = Self.path(of: String(decoding: bytes[(method + 1)..<target], as: UTF8.self))
                self.major = major
                self.minor = minor
            }

            /// The path of an origin-form (`/metrics?x`) or absolute-form (`http://h/metrics`)
            /// target, without its query; other forms (`*`, `host:port`) as they are.
            static func path(of target: String) -> String {
                var rest = Substring(target)
                let lowered = target.lowercased()
                for scheme in ["http://", "https://"] where lowered.hasPrefix(scheme) {
                    rest = rest.dropFirst(scheme.count)
                    rest = rest.firstIndex(of: "/").map { rest[$0...] } ?? "/"
                }
                return String(rest.prefix { $0 != "?" })
            }
        }

        /// Whether a header line is `Host:`; nil when it is not a header line (no name, space
        /// before the colon, a folded line, a control byte in the value).
        static func headerIsHost(_ bytes: UnsafeBufferPointer<UInt8>, _ line: Range<Int>) -> Bool? {
            var colon = line.lowerBound
            while colon < line.upperBound, isTokenByte(bytes[colon]) { colon += 1 }
            guard colon > line.lowerBound, colon < line.upperBound, bytes[colon] == UInt8(ascii: ":") else {
                return nil
            }
            var index = colon + 1
            while index < line.upperBound {
                let byte = bytes[index]
                guard byte == tab || (byte >= space && byte != 0x7F) else { return nil }
                index += 1
            }
            return colon - line.lowerBound == 4
                && (0..<4).allSatisfy { bytes[line.lowerBound + $0] | 0x20 == Array("host".utf8)[$0] }
        }

        /// RFC 9110 `tchar`: the bytes of a method or a header name.
        static func isTokenByte(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "!"), UInt8(ascii: "#")...UInt8(ascii: "'"),
                UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"),
                UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
                return true
            default:
                return false
            }
        }

        static func digit(_ byte: UInt8) -> Int? {
            byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") ? Int(byte - UInt8(ascii: "0")) : nil
        }

        /// The media type of the text exposition format 0.0.4.
        static let metricsContentType = "text/plain; version=0.0.4; charset=utf-8"

        /// The whole answer: status line, headers (`Content-Length` always, `Connection: close`),
        /// and the body unless the request was HEAD. `metrics` is called for a 200 only.
        static func response(_ answer: Answer, metrics: () -> [UInt8]) -> [UInt8] {
            let status = answer.status
            let body = status == .ok ? metrics() : Array("\(status.rawValue) \(status.reason)\n".utf8)
            var head = "HTTP/1.1 \(status.rawValue) \(status.reason)\r\n"
            head += "Content-Type: \(status == .ok ? metricsContentType : "text/plain; charset=utf-8")\r\n"
            head += "Content-Length: \(body.count)\r\n"
            if status == .methodNotAllowed { head += "Allow: GET, HEAD\r\n" }
            head += "Cache-Control: no-store\r\nConnection: close\r\n\r\n"
            return Array(head.utf8) + (answer.headersOnly ? [] : body)
        }

        static let cr = UInt8(ascii: "\r")
        static let lf = UInt8(ascii: "\n")
        static let space = UInt8(ascii: " ")
        static let tab = UInt8(ascii: "\t")
    }
}
