// A small HTTP client over real loopback sockets, for the metrics endpoint's tests: sends any
// bytes (valid requests, garbage, a byte at a time), reads with deadlines, and tells a clean
// close from a reset and from silence.
import Foundation
import Glibc

/// One TCP connection to a loopback port. Every wait has a deadline.
public final class LoopbackConnection {
    public struct Failure: Error, CustomStringConvertible {
        public let errno: Int32
        public var description: String { "connect: \(String(cString: strerror(errno))) (errno \(errno))" }
    }

    /// How reading to the end went.
    public enum Ending: Equatable, Sendable {
        /// The server closed the connection (FIN).
        case closed
        /// The server reset it (RST).
        case reset
        /// Neither happened before the deadline.
        case timedOut
    }

    public let fd: Int32

    /// Connects to `host:port` (blocking, loopback is immediate); throws with the errno
    /// (ECONNREFUSED when nothing listens).
    public init(port: Int, host: String = "127.0.0.1") throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(errno: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        inet_pton(AF_INET, host, &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let error = errno
            Glibc.close(fd)
            throw Failure(errno: error)
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        self.fd = fd
    }

    deinit { Glibc.close(fd) }

    /// Sends all of `bytes` within `timeoutSeconds`; false when the server stopped taking them
    /// (it closed or reset the connection, or its buffers stayed full).
    @discardableResult
    public func send(_ bytes: [UInt8], timeoutSeconds: Double = 5) -> Bool {
        let deadline = monotonicSeconds() + timeoutSeconds
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 {
                offset += sent
                continue
            }
            guard sent < 0, errno == EAGAIN || errno == EINTR else { return false }
            guard wait(for: POLLOUT, until: deadline) else { return false }
        }
        return true
    }

    @discardableResult
    public func send(_ text: String, timeoutSeconds: Double = 5) -> Bool {
        send(Array(text.utf8), timeoutSeconds: timeoutSeconds)
    }

    /// Half-closes: the server sees the end of the request stream, and can still answer.
    public func shutdownWrite() { _ = Glibc.shutdown(fd, Int32(SHUT_WR)) }

    /// Whatever arrives within `timeoutSeconds`, up to the server's close or reset.
    public func readToEnd(timeoutSeconds: Double = 5) -> (bytes: [UInt8], ending: Ending) {
        let deadline = monotonicSeconds() + timeoutSeconds
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                bytes += chunk[..<count]
                continue
            }
            if count == 0 { return (bytes, .closed) }
            if errno == ECONNRESET { return (bytes, .reset) }
            guard errno == EAGAIN || errno == EINTR else { return (bytes, .reset) }
            guard wait(for: POLLIN, until: deadline) else { return (bytes, .timedOut) }
        }
    }

    /// Whether the server has closed or answered (something is readable) within `timeoutSeconds`.
    public func isReadable(timeoutSeconds: Double) -> Bool {
        wait(for: POLLIN, until: monotonicSeconds() + timeoutSeconds)
    }

    private func wait(for event: Int32, until deadline: Double) -> Bool {
        while true {  // polls at least once, also when the deadline has passed
            let remaining = deadline - monotonicSeconds()
            var descriptor = pollfd(fd: fd, events: Int16(event), revents: 0)
            let ready = poll(&descriptor, 1, Int32(max(0, (remaining * 1000).rounded(.up))))
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR { return false }
            if remaining <= 0 { return false }
        }
    }
}

/// An HTTP/1.1 response as the endpoint writes it: status line, headers, body.
public struct LoopbackHTTPResponse: Sendable {
    public let status: Int
    public let statusLine: String
    /// Header names lowercased.
    public let headers: [String: String]
    public let body: [UInt8]

    /// Parses `bytes`; nil when they are not one whole response whose body has `Content-Length`
    /// bytes (all of them, when `headersOnly` is false).
    public init?(_ bytes: [UInt8], headersOnly: Bool = false) {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else { return nil }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let parts = lines[0].split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0] == "HTTP/1.1", let status = Int(parts[1]) else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        let body = Array(bytes[(end + 4)...])
        guard let length = headers["content-length"].flatMap({ Int($0) }) else { return nil }
        guard headersOnly ? body.isEmpty : body.count == length else { return nil }
        self.status = status
        self.statusLine = lines[0]
        self.headers = headers
        self.body = body
    }

    public var text: String { String(decoding: body, as: UTF8.self) }
}

public enum LoopbackHTTP {
    /// Sends `request`, half-closes unless `halfClose` is false, and reads to the server's close.
    public static func exchange(
        port: Int, _ request: [UInt8], halfClose: Bool = true, timeoutSeconds: Double = 5
    ) throws -> (bytes: [UInt8], ending: LoopbackConnection.Ending) {
        let connection = try LoopbackConnection(port: port)
        connection.send(request, timeoutSeconds: timeoutSeconds)
        if halfClose { connection.shutdownWrite() }
        return connection.readToEnd(timeoutSeconds: timeoutSeconds)
    }

    /// `method path` over HTTP/1.1 with a Host header; nil when the answer is not one whole response.
    public static func request(
        port: Int, method: String = "GET", path: String = "/metrics", timeoutSeconds: Double = 5
    ) throws -> LoopbackHTTPResponse? {
        let text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUser-Agent: perf-tests\r\n\r\n"
        let (bytes, _) = try exchange(port: port, Array(text.utf8), timeoutSeconds: timeoutSeconds)
        return LoopbackHTTPResponse(bytes, headersOnly: method == "HEAD")
    }

    /// The errno of connecting to `port` now, or nil when the connection was accepted.
    public static func connectError(port: Int) -> Int32? {
        do {
            _ = try LoopbackConnection(port: port)
            return nil
        } catch let failure as LoopbackConnection.Failure {
            return failure.errno
        } catch {
            return EIO
        }
    }
}
