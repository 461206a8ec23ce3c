// systemd's notification protocol (sd_notify(3)) without libsystemd: one datagram per message to
// the AF_UNIX socket `$NOTIFY_SOCKET` names, a path or an abstract name written `@name`. Sends
// never block and never raise SIGPIPE; a failure is returned, never thrown.
import Glibc

/// Where `$NOTIFY_SOCKET` says the service manager listens.
enum NotifySocketAddress: Equatable, Sendable {
    /// A socket file: an absolute path.
    case path(String)
    /// A name in Linux's abstract namespace, given as `@name`; held without the `@`, sent with
    /// a leading NUL.
    case abstract([UInt8])

    /// Why a `$NOTIFY_SOCKET` value cannot be used.
    enum Problem: Error, Equatable, CustomStringConvertible {
        case empty
        /// Neither an absolute path nor `@name` (a relative path, or systemd's `vsock:` form).
        case unsupported
        /// Longer than `sun_path` takes (107 bytes of path, or of name after `@`).
        case tooLong(Int)
        /// A NUL byte in a path.
        case embeddedNUL

        var description: String {
            switch self {
            case .empty: return "empty"
            case .unsupported: return "neither an absolute path nor an @abstract name"
            case .tooLong(let bytes): return "\(bytes) bytes, more than a unix socket address holds"
            case .embeddedNUL: return "contains a NUL byte"
            }
        }
    }

    /// Bytes of `sockaddr_un.sun_path`.
    static let capacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path)

    /// Parses a `$NOTIFY_SOCKET` value.
    init(parsing value: String) throws(Problem) {
        var bytes = Array(value.utf8)
        guard let first = bytes.first else { throw .empty }
        switch first {
        case UInt8(ascii: "/"):
            guard !bytes.contains(0) else { throw .embeddedNUL }
            // The path and its terminating NUL.
            guard bytes.count + 1 <= Self.capacity else { throw .tooLong(bytes.count) }
            self = .path(value)
        case UInt8(ascii: "@"):
            bytes.removeFirst()
            guard !bytes.isEmpty else { throw .empty }
            // A leading NUL and the name; an abstract name is its exact bytes, no terminator.
            guard bytes.count + 1 <= Self.capacity else { throw .tooLong(bytes.count) }
            self = .abstract(bytes)
        default:
            throw .unsupported
        }
    }

    /// The `sun_path` bytes this address puts on the wire (the leading NUL of an abstract name,
    /// the terminating NUL of a path).
    var sunPathBytes: [UInt8] {
        switch self {
        case .path(let path): return Array(path.utf8) + [0]
        case .abstract(let name): return [0] + name
        }
    }

    /// Calls `body` with the socket address and its length.
    func withSocketAddress<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = sunPathBytes
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes.prefix(raw.count))
        }
        let length = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)! + min(bytes.count, Self.capacity)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(length)) }
        }
    }
}

/// Sends notifications (`READY=1`, `WATCHDOG=1`) to the service manager.
struct SystemdNotifier: Sendable, Equatable {
    let address: NotifySocketAddress

    /// The notifier `$NOTIFY_SOCKET` names: `nil` when it is unset (not run by systemd, or by a
    /// unit that does not listen), a problem when it is set but unusable.
    static func fromEnvironment(
        _ environment: [String: String]
    ) -> Result<SystemdNotifier, NotifySocketAddress.Problem>? {
        guard let value = environment["NOTIFY_SOCKET"] else { return nil }
        do throws(NotifySocketAddress.Problem) {
            return .success(SystemdNotifier(address: try NotifySocketAddress(parsing: value)))
        } catch {
            return .failure(error)
        }
    }

    /// Sends `message` as one datagram from a fresh non-blocking socket. Returns 0, or the errno
    /// of the step that failed (`EAGAIN` when the manager's queue is full: nothing waits).
    @discardableResult
    func send(_ message: String) -> Int32 {
        let type = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let descriptor = socket(AF_UNIX, type, 0)
        guard descriptor >= 0 else { return errno }
        defer { close(descriptor) }
        let payload = Array(message.utf8)
        while true {
            let sent = address.withSocketAddress { socketAddress, length in
                payload.withUnsafeBytes { buffer in
                    sendto(
                        descriptor, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL),
                        socketAddress, length)
                }
            }
            if sent >= 0 { return 0 }
            let failure = errno
            if failure != EINTR { return failure }
        }
    }
}

/// systemd's service watchdog as the environment describes it (sd_watchdog_enabled(3)).
enum SystemdWatchdogEnvironment: Equatable {
    /// No watchdog for this process: `$WATCHDOG_USEC` unset, or `$WATCHDOG_PID` names another
    /// process (one that inherited the variables from the service's main process).
    case off
    /// The variables are set but unusable; the message says why.
    case invalid(String)
    /// Send `WATCHDOG=1` to `notifier` at least every `timeoutNanos`.
    case on(notifier: SystemdNotifier, timeoutNanos: UInt64)

    init(environment: [String: String], pid: pid_t) {
        guard let usecText = environment["WATCHDOG_USEC"], !usecText.isEmpty else {
            self = .off
            return
        }
        if let pidText = environment["WATCHDOG_PID"], !pidText.isEmpty {
            guard let watchdogPID = Int32(pidText), watchdogPID > 0 else {
                self = .invalid("WATCHDOG_PID=\(pidText.debugDescription) is not a process id")
                return
            }
            guard watchdogPID == pid else {
                self = .off
                return
            }
        }
        guard let usec = UInt64(usecText), usec > 0, usec < UInt64.max / 1_000 else {
            self = .invalid("WATCHDOG_USEC=\(usecText.debugDescription) is not a positive number of microseconds")
            return
        }
        switch SystemdNotifier.fromEnvironment(environment) {
        case nil:
            self = .invalid("WATCHDOG_USEC is set but NOTIFY_SOCKET is not")
        case .failure(let problem):
            let value = environment["NOTIFY_SOCKET", default: ""]
            self = .invalid("NOTIFY_SOCKET=\(value.debugDescription) is \(problem)")
        case .success(let notifier):
            self = .on(notifier: notifier, timeoutNanos: usec * 1_000)
        }
    }
}
