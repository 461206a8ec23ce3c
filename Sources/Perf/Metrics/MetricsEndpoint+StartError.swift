// Why a metrics endpoint could not start, in words that name the address and what to do.
import Glibc

extension Perf.MetricsEndpoint {
    /// Why ``Perf/MetricsEndpoint/start(host:port:)`` failed.
    public struct StartError: Error, Equatable, CustomStringConvertible {
        public enum Reason: Equatable, Sendable {
            /// The host is not a numeric IPv4 or IPv6 address (names are not looked up).
            case badAddress
            /// The port is outside 0…65535.
            case badPort
            /// Another socket listens on that address and port (EADDRINUSE).
            case addressInUse
            /// The address is not one of this host's (EADDRNOTAVAIL).
            case addressNotAvailable
            /// Binding was refused (EACCES: a port below 1024 needs CAP_NET_BIND_SERVICE).
            case permissionDenied
            /// Another call failed: its name and errno.
            case system(call: String, errno: Int32)
        }

        /// The address and port asked for.
        public let host: String
        public let port: Int
        public let reason: Reason

        /// One line, e.g. `perf: cannot serve metrics on 127.0.0.1:9464: the address is in use …`.
        public var description: String {
            let address = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            let why: String
            switch reason {
            case .badAddress: why = "'\(host)' is not a numeric IPv4 or IPv6 address (such as 127.0.0.1 or ::1)"
            case .badPort: why = "the port \(port) is not in 0...65535 (0 picks any free port)"
            case .addressInUse:
                why = "the address is in use (another socket listens on it; pick another port, or 0 for any free one)"
            case .addressNotAvailable: why = "\(host) is not an address of this host"
            case .permissionDenied:
                why = "permission denied (ports below 1024 need CAP_NET_BIND_SERVICE; use a higher port)"
            case .system(let call, let errno):
                why = "\(call) failed (\(String(cString: strerror(errno)).lowercased()), errno \(errno))"
            }
            return "perf: cannot serve metrics on \(address): \(why)"
        }
    }
}

extension Perf.MetricsEndpoint.StartError.Reason {
    init(_ failure: SocketSyscalls.ListenFailure) {
        switch (failure.step, failure.errno) {
        case (.bind, EADDRINUSE), (.listen, EADDRINUSE): self = .addressInUse
        case (.bind, EADDRNOTAVAIL): self = .addressNotAvailable
        case (.bind, EACCES): self = .permissionDenied
        default: self = .system(call: failure.step.rawValue, errno: failure.errno)
        }
    }
}
