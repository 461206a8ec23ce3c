// The metrics endpoint's socket seam: every socket, pipe and poll call the endpoint makes goes
// through here, EINTR retried by the package's one helper (`retryingEINTR`), errors as errnos.
// Descriptors are close-on-exec and non-blocking from birth (SOCK_CLOEXEC | SOCK_NONBLOCK,
// accept4, pipe2), and sends never raise SIGPIPE (MSG_NOSIGNAL), so a client that hangs up cannot
// kill the host program.
import CPerfShims
import Glibc
import JournalKit

enum SocketSyscalls {
    /// A numeric IPv4 or IPv6 address and a port, ready for bind(2).
    enum Address {
        case v4(sockaddr_in)
        case v6(sockaddr_in6)

        /// `host` as a numeric address (`localhost` is `127.0.0.1`; no name lookup, which could
        /// block), or nil.
        init?(host: String, port: UInt16) {
            let literal = host == "localhost" ? "127.0.0.1" : host
            var v4 = sockaddr_in()
            if inet_pton(AF_INET, literal, &v4.sin_addr) == 1 {
                v4.sin_family = sa_family_t(AF_INET)
                v4.sin_port = port.bigEndian
                self = .v4(v4)
                return
            }
            var v6 = sockaddr_in6()
            let bare =
                literal.hasPrefix("[") && literal.hasSuffix("]") ? String(literal.dropFirst().dropLast()) : literal
            guard inet_pton(AF_INET6, bare, &v6.sin6_addr) == 1 else { return nil }
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            self = .v6(v6)
        }

        var family: Int32 {
            switch self {
            case .v4: return AF_INET
            case .v6: return AF_INET6
            }
        }

        func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
            switch self {
            case .v4(var address):
                return withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            case .v6(var address):
                return withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                    }
                }
            }
        }
    }

    /// Which call of `listen(_:backlog:)` failed.
    enum ListenStep: String, Sendable {
        case socket, bind, listen, getsockname
    }

    /// A listening, non-blocking, close-on-exec TCP socket on `address` (SO_REUSEADDR, so a
    /// restart is not refused over connections in TIME_WAIT) and the port it got.
    static func listen(_ address: Address, backlog: Int32) -> Result<(fd: Int32, port: UInt16), ListenFailure> {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let fd = socket(address.family, type, 0)
        guard fd >= 0 else { return .failure(ListenFailure(step: .socket, errno: errno)) }
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        func fail(_ step: ListenStep) -> Result<(fd: Int32, port: UInt16), ListenFailure> {
            let error = errno
            close(fd)
            return .failure(ListenFailure(step: step, errno: error))
        }
        guard address.withSockaddr({ Glibc.bind(fd, $0, $1) }) == 0 else { return fail(.bind) }
        guard Glibc.listen(fd, backlog) == 0 else { return fail(.listen) }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { return fail(.getsockname) }
        let port = withUnsafePointer(to: &storage) { pointer -> UInt16 in
            switch address {
            case .v4:
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port.bigEndian }
            case .v6:
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_port.bigEndian }
            }
        }
        return .success((fd, port))
    }

    struct ListenFailure: Error, Equatable {
        let step: ListenStep
        let errno: Int32
    }

    /// One pending connection, non-blocking and close-on-exec; `.failure(EAGAIN)` when none waits.
    static func accept(_ listener: Int32) -> SyscallResult {
        retryingEINTR { Int(perf_accept4(listener, Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue))) }
    }

    /// One recv(2); 0 when the peer closed its side.
    static func receive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> SyscallResult {
        retryingEINTR { recv(fd, buffer.baseAddress, buffer.count, 0) }
    }

    /// One send(2) that never raises SIGPIPE; the count taken, or the errno (EAGAIN: buffer full).
    static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> SyscallResult {
        retryingEINTR { Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
    }

    /// poll(2); an interrupted wait counts as a wait in which nothing happened.
    static func poll(_ descriptors: inout [pollfd], timeoutMs: Int32) -> SyscallResult {
        let ready = descriptors.withUnsafeMutableBufferPointer {
            Glibc.poll($0.baseAddress, nfds_t($0.count), timeoutMs)
        }
        if ready >= 0 { return .success(Int(ready)) }
        return errno == EINTR ? .success(0) : .failure(errno)
    }

    /// A non-blocking, close-on-exec pipe: (read end, write end).
    static func makePipe() -> Result<(read: Int32, write: Int32), SyscallError> {
        var ends: [Int32] = [-1, -1]
        guard perf_pipe2(&ends, O_CLOEXEC | O_NONBLOCK) == 0 else { return .failure(SyscallError(errno: errno)) }
        return .success((ends[0], ends[1]))
    }

    /// Writes one byte to a wake pipe (a full pipe is already awake).
    static func wake(_ fd: Int32) {
        var byte: UInt8 = 1
        _ = retryingEINTR { Glibc.write(fd, &byte, 1) }
    }

    /// Ends our direction of a connection (FIN) while still reading the peer's.
    static func shutdownWrite(_ fd: Int32) {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    /// close(2), not retried on EINTR (on Linux the descriptor is gone either way).
    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }
}
