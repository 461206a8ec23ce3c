// The opt-in metrics endpoint: `GET /metrics` on loopback for a service without an HTTP server of
// its own, served by one dedicated thread under hard limits. Nothing is bound unless it is started.
import Glibc
import Synchronization

extension Perf {
    /// An HTTP endpoint that answers `GET /metrics` (and `HEAD`) with Perf's live Prometheus
    /// exposition, for a service that has no HTTP server of its own. Opt-in: nothing listens
    /// until ``start(host:port:)`` is called.
    ///
    /// ```swift
    /// let endpoint = try Perf.MetricsEndpoint.start()                   // 127.0.0.1:9464
    /// let any = try Perf.MetricsEndpoint.start(host: "127.0.0.1", port: 0)   // any free port: any.port
    /// endpoint.stop()                                                   // or Perf.shutdown()
    /// ```
    ///
    /// It runs on one thread of its own (a `poll` loop, never a Dispatch or cooperative-pool
    /// thread) and never blocks the program's threads. Hard limits: 4 connections at once (more
    /// wait in the listen backlog), a request head of at most 8 KiB (longer: 431), 2 s to send it
    /// (then 408) and 2 s to take the answer; only the request line and headers are read (HTTP/1.0
    /// and 1.1), and every answer closes the connection. Other paths get 404, other methods 405,
    /// anything malformed 400. Whatever a client sends, the program does not crash.
    ///
    /// It runs until ``stop()`` or ``Perf/shutdown()``; dropping the last reference does not stop it.
    public final class MetricsEndpoint: Sendable {
        /// The address it listens on, as given.
        public let host: String
        /// The port it listens on (the one the kernel chose, when started with port 0).
        public let port: Int

        let limits: Limits
        /// What the thread has done; for tests.
        package let counters: Counters
        /// The listening socket and the wake pipe's two ends, as opened; for tests that check
        /// they are closed after ``stop()``.
        package let descriptors: [Int32]
        private let running: Mutex<Running?>

        private struct Running: Sendable {
            var thread: pthread_t
            var wakeWrite: Int32
        }

        private init(
            host: String, port: Int, limits: Limits, running: pthread_t, wakeWrite: Int32, counters: Counters,
            descriptors: [Int32]
        ) {
            self.host = host
            self.port = port
            self.limits = limits
            self.counters = counters
            self.descriptors = descriptors
            self.running = Mutex(Running(thread: running, wakeWrite: wakeWrite))
        }

        /// Starts serving Perf's live exposition on `host:port`.
        ///
        /// - Parameters:
        ///   - host: a numeric IPv4 or IPv6 address (or `localhost`); loopback by default, so
        ///     only this machine can scrape it. `0.0.0.0` serves every interface.
        ///   - port: the TCP port; 0 lets the kernel choose one (read it from ``port``).
        /// - Throws: ``StartError`` naming the address and why (not a numeric address, port out
        ///   of range, address in use, not an address of this host, permission denied).
        @discardableResult
        public static func start(host: String = "127.0.0.1", port: Int = 9464) throws(StartError) -> MetricsEndpoint {
            try start(host: host, port: port, limits: Limits(), body: exposition)
        }

        /// The public endpoint's body: the live exposition.
        static let exposition: @Sendable () -> String = { Perf.prometheusText() }

        /// Starts serving what `body` returns, called on the endpoint's thread once per `GET` or
        /// `HEAD` of `/metrics`; the seam tests and the scrape validation use.
        @discardableResult
        package static func start(
            host: String, port: Int, limits: Limits, body: @escaping @Sendable () -> String
        ) throws(StartError) -> MetricsEndpoint {
            func failure(_ reason: StartError.Reason) -> StartError {
                StartError(host: host, port: port, reason: reason)
            }
            guard let port16 = UInt16(exactly: port) else { throw failure(.badPort) }
            guard let address = SocketSyscalls.Address(host: host, port: port16) else { throw failure(.badAddress) }
            let listener: (fd: Int32, port: UInt16)
            switch SocketSyscalls.listen(address, backlog: max(1, limits.backlog)) {
            case .success(let bound): listener = bound
            case .failure(let failed): throw failure(StartError.Reason(failed))
            }
            let wake: (read: Int32, write: Int32)
            switch SocketSyscalls.makePipe() {
            case .success(let ends): wake = ends
            case .failure(let error):
                SocketSyscalls.close(listener.fd)
                throw failure(.system(call: "pipe2", errno: error.errno))
            }
            let counters = Counters()
            let loop = MetricsServerLoop(
                listener: listener.fd, wakeRead: wake.read, limits: limits, body: body, counters: counters)
            guard let thread = loop.spawn() else {
                for fd in [listener.fd, wake.read, wake.write] { SocketSyscalls.close(fd) }
                throw failure(.system(call: "pthread_create", errno: EAGAIN))
            }
            let endpoint = MetricsEndpoint(
                host: host, port: Int(listener.port), limits: limits, running: thread, wakeWrite: wake.write,
                counters: counters, descriptors: [listener.fd, wake.read, wake.write])
            MetricsEndpointRegistry.add(endpoint)
            return endpoint
        }

        /// Stops serving: wakes the endpoint's thread, waits for it to close every connection and
        /// the listening socket, then returns (a connect after this is refused). Idempotent.
        public func stop() {
            guard
                let running = running.withLock({ running -> Running? in
                    defer { running = nil }
                    return running
                })
            else { return }
            MetricsEndpointRegistry.remove(self)
            SocketSyscalls.wake(running.wakeWrite)
            OwnThread.joinOrDetach(running.thread)  // detached when stop() comes from the body provider
            SocketSyscalls.close(running.wakeWrite)
        }

        /// Whether the endpoint is serving (started, and neither stopped nor shut down).
        public var isRunning: Bool { running.withLock { $0 != nil } }
    }
}

/// The running endpoints, held until stopped, so `Perf.shutdown()` can stop them all.
enum MetricsEndpointRegistry {
    private static let endpoints = Mutex<[ObjectIdentifier: Perf.MetricsEndpoint]>([:])

    static func add(_ endpoint: Perf.MetricsEndpoint) {
        endpoints.withLock { $0[ObjectIdentifier(endpoint)] = endpoint }
    }

    static func remove(_ endpoint: Perf.MetricsEndpoint) {
        _ = endpoints.withLock { $0.removeValue(forKey: ObjectIdentifier(endpoint)) }
    }

    /// Stops every running endpoint; each has closed its sockets when this returns.
    static func stopAll() {
        let running = endpoints.withLock { endpoints -> [Perf.MetricsEndpoint] in
            defer { endpoints.removeAll() }
            return Array(endpoints.values)
        }
        for endpoint in running { endpoint.stop() }
    }
}
