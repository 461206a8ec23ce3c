// A stand-in for systemd's notification socket: a SOCK_DGRAM unix socket the test binds, at a
// path or an abstract name, built here independently of the code under test.
import Foundation
import Glibc
import PerfTestSupport
import Testing

/// One datagram and when it arrived (CLOCK_MONOTONIC, comparable across processes).
struct NotifyMessage {
    var text: String
    var arrivedNanos: UInt64
}

/// A bound notification socket; `value` is what `$NOTIFY_SOCKET` should say.
final class NotifyListener {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case path
        case abstract

        var testDescription: String { rawValue }
    }

    let value: String
    private let descriptor: Int32
    private let boundPath: String?

    /// Binds `<directory>/notify` or the abstract name `@perf-test-<pid>-<random>`.
    init(_ kind: Kind, in directory: URL) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw ChildProcess.Failure(description: "socket: errno \(errno)") }
        var name: [UInt8]
        switch kind {
        case .path:
            let path = directory.appendingPathComponent("notify").path
            boundPath = path
            value = path
            name = Array(path.utf8) + [0]
        case .abstract:
            let abstract = "perf-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            boundPath = nil
            value = "@" + abstract
            name = [0] + Array(abstract.utf8)
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard name.count <= capacity else {
            close(descriptor)
            throw ChildProcess.Failure(description: "notify socket path too long: \(value)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: name) }
        // sun_family (2 bytes) and exactly the name's bytes: an abstract name has no terminator.
        let length = socklen_t(2 + name.count)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else {
            let failure = errno
            close(descriptor)
            throw ChildProcess.Failure(description: "bind \(value): errno \(failure)")
        }
    }

    deinit {
        close(descriptor)
        if let boundPath { unlink(boundPath) }
    }

    /// The next datagram, or nil when `timeoutSeconds` pass first.
    func receive(timeoutSeconds: Double) -> NotifyMessage? {
        let deadline = monotonicSeconds() + timeoutSeconds
        while true {
            let remainingMs = Int32(max(0, (deadline - monotonicSeconds()) * 1000))
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, remainingMs)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes {
                recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
            }
            if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            guard count >= 0 else { return nil }
            return NotifyMessage(
                text: String(decoding: buffer[..<count], as: UTF8.self),
                arrivedNanos: DispatchTime.now().uptimeNanoseconds)
        }
    }

    /// Every datagram until `untilNanos` (CLOCK_MONOTONIC), then every one already queued.
    func receiveAll(untilNanos: UInt64) -> [NotifyMessage] {
        var messages: [NotifyMessage] = []
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            let remaining = untilNanos > now ? Double(untilNanos - now) / 1e9 : 0
            guard let message = receive(timeoutSeconds: remaining) else {
                if remaining == 0 { return messages }
                continue
            }
            messages.append(message)
        }
    }
}
