// The metrics endpoint's thread: one poll(2) loop over the wake pipe, the listener and at most
// `maxConnections` clients. Every descriptor is non-blocking, every wait is bounded by a
// connection's deadline, and nothing here runs on a thread of the program's (no Dispatch, no
// cooperative pool), so a slow or hostile client costs this thread's time and a few descriptors.
import CPerfShims
import Glibc
import Synchronization

extension Perf.MetricsEndpoint {
    /// The endpoint's hard limits: fixed at start, package-visible so tests can shorten them.
    package struct Limits: Sendable, Equatable {
        /// Connections served at once; more wait in the listen backlog until one ends.
        package var maxConnections = 4
        /// Time a client has to send its whole request head, and then to take the answer.
        package var readTimeout: Duration = .seconds(2)
        /// Largest request head (request line and headers) read; a longer one gets 431.
        package var maxRequestHeadBytes = 8 * 1024
        /// Connections the kernel holds for us while all `maxConnections` are busy.
        package var backlog: Int32 = 16

        package init() {}

        var readTimeoutNanos: UInt64 {
            let (seconds, attoseconds) = readTimeout.components
            return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        }
    }

    /// What the endpoint's thread has done, for tests and diagnostics.
    package final class Counters: Sendable {
        let acceptedCount = Atomic<Int>(0)
        let answeredCount = Atomic<Int>(0)
        let timedOutCount = Atomic<Int>(0)

        /// Connections accepted.
        package var accepted: Int { acceptedCount.load(ordering: .relaxed) }
        /// Answers written in full (any status).
        package var answered: Int { answeredCount.load(ordering: .relaxed) }
        /// Connections cut at their deadline.
        package var timedOut: Int { timedOutCount.load(ordering: .relaxed) }
    }
}

/// The loop and everything it owns; handed to its thread once and touched by nothing else
/// (hence unchecked: only that thread ever reads or writes its state).
final class MetricsServerLoop: @unchecked Sendable {
    private struct Connection {
        enum Phase { case reading, writing, draining }

        let fd: Int32
        var phase = Phase.reading
        var input: [UInt8] = []
        var output: [UInt8] = []
        var sent = 0
        var deadline: UInt64
    }

    private let listener: Int32
    private let wakeRead: Int32
    private let limits: Perf.MetricsEndpoint.Limits
    private let body: @Sendable () -> String
    private let counters: Perf.MetricsEndpoint.Counters
    private var connections: [Connection] = []
    /// When accept(2) failed for want of descriptors or memory (EMFILE, ENFILE, ENOBUFS): the
    /// listener stays readable, so it is left alone until then instead of spinning.
    private var acceptPausedUntil: UInt64 = 0
    private var scratch = [UInt8](repeating: 0, count: 16 * 1024)

    init(
        listener: Int32, wakeRead: Int32, limits: Perf.MetricsEndpoint.Limits, body: @escaping @Sendable () -> String,
        counters: Perf.MetricsEndpoint.Counters
    ) {
        self.listener = listener
        self.wakeRead = wakeRead
        self.limits = limits
        self.body = body
        self.counters = counters
    }

    /// Starts the thread; `nil` if pthread_create failed (the caller still owns the descriptors).
    func spawn() -> pthread_t? { OwnThread.spawn { self.run() } }

    /// Serves until the wake pipe is written to, then closes every connection, the listener and
    /// the pipe's read end.
    private func run() {
        perf_name_current_thread("perf-metrics")
        defer {
            for connection in connections { SocketSyscalls.close(connection.fd) }
            connections.removeAll()
            SocketSyscalls.close(listener)
            SocketSyscalls.close(wakeRead)
        }
        while true {
            let now = perf_monotonic_ns()
            expire(now: now)
            let listening = connections.count < limits.maxConnections && now >= acceptPausedUntil
            var descriptors = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            if listening { descriptors.append(pollfd(fd: listener, events: Int16(POLLIN), revents: 0)) }
            let first = descriptors.count
            for connection in connections {
                let events = connection.phase == .writing ? POLLOUT : POLLIN
                descriptors.append(pollfd(fd: connection.fd, events: Int16(events), revents: 0))
            }
            guard case .success = SocketSyscalls.poll(&descriptors, timeoutMs: timeoutMs(now: perf_monotonic_ns()))
            else { return }  // poll itself failed (EFAULT, EINVAL, ENOMEM): stop rather than spin
            if descriptors[0].revents != 0 { return }
            // Existing connections first: accepting appends to `connections`.
            var kept: [Connection] = []
            kept.reserveCapacity(connections.count)
            for (offset, var connection) in connections.enumerated() {
                let open = descriptors[first + offset].revents == 0 ? true : service(&connection)
                if open { kept.append(connection) } else { SocketSyscalls.close(connection.fd) }
            }
            connections = kept
            if listening, descriptors[1].revents != 0 { acceptPending() }
        }
    }

    /// Milliseconds until the nearest deadline, rounded up; -1 (wait for an event) with no client.
    private func timeoutMs(now: UInt64) -> Int32 {
        var deadlines = connections.map(\.deadline)
        if acceptPausedUntil > now { deadlines.append(acceptPausedUntil) }
        guard let nearest = deadlines.min() else { return -1 }
        guard nearest > now else { return 0 }
        return Int32(clamping: (nearest - now + 999_999) / 1_000_000)
    }

    /// Accepts while a connection is waiting and there is room.
    private func acceptPending() {
        while connections.count < limits.maxConnections {
            let accepted = SocketSyscalls.accept(listener)
            if case .failure(let errno) = accepted, errno != EAGAIN, errno != EWOULDBLOCK, errno != ECONNABORTED {
                acceptPausedUntil = perf_monotonic_ns() + 100_000_000
            }
            guard case .success(let fd) = accepted else { return }
            counters.acceptedCount.add(1, ordering: .relaxed)
            connections.append(
                Connection(fd: Int32(fd), deadline: perf_monotonic_ns() + limits.readTimeoutNanos))
        }
    }

    /// Cuts every connection past its deadline: a client still sending its head gets a 408 if its
    /// socket takes it at once.
    private func expire(now: UInt64) {
        connections.removeAll { connection in
            guard connection.deadline <= now else { return false }
            if connection.phase != .draining { counters.timedOutCount.add(1, ordering: .relaxed) }
            if connection.phase == .reading {
                let answer = Perf.MetricsEndpoint.HTTP.response(.init(status: .requestTimeout), metrics: { [] })
                _ = answer.withUnsafeBytes { SocketSyscalls.send(connection.fd, $0) }
            }
            SocketSyscalls.close(connection.fd)
            return true
        }
    }

    /// Does what a ready connection allows; false when it is finished and must be closed.
    private func service(_ connection: inout Connection) -> Bool {
        switch connection.phase {
        case .reading: return read(&connection)
        case .writing: return write(&connection)
        case .draining:
            // The answer is out and our side shut: read what the client still sends until it
            // closes, so closing never resets a connection whose answer is still in flight.
            let received = scratch.withUnsafeMutableBytes { SocketSyscalls.receive(connection.fd, into: $0) }
            switch received {
            case .success(let count): return count > 0
            case .failure(let errno): return errno == EAGAIN || errno == EWOULDBLOCK
            }
        }
    }

    private func read(_ connection: inout Connection) -> Bool {
        let limit = limits.maxRequestHeadBytes
        let room = min(scratch.count, limit + 1 - connection.input.count)
        let received = scratch.withUnsafeMutableBytes {
            SocketSyscalls.receive(connection.fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[..<room]))
        }
        let atEnd: Bool
        switch received {
        case .success(0): atEnd = true
        case .success(let count):
            atEnd = false
            connection.input += scratch[..<count]
            // The head can only have ended with a line feed in what just came (or the limit passed).
            guard scratch[..<count].contains(Perf.MetricsEndpoint.HTTP.lf) || connection.input.count > limit else {
                return true
            }
        case .failure(let errno): return errno == EAGAIN || errno == EWOULDBLOCK
        }
        let answer = connection.input.withUnsafeBufferPointer {
            Perf.MetricsEndpoint.HTTP.answer(to: $0, limit: limit, atEnd: atEnd)
        }
        guard let answer else { return !atEnd }
        connection.output = Perf.MetricsEndpoint.HTTP.response(answer) { Array(body().utf8) }
        connection.input = []
        connection.phase = .writing
        connection.deadline = perf_monotonic_ns() + limits.readTimeoutNanos
        return write(&connection)
    }

    private func write(_ connection: inout Connection) -> Bool {
        while connection.sent < connection.output.count {
            let sent = connection.output.withUnsafeBytes {
                SocketSyscalls.send(connection.fd, UnsafeRawBufferPointer(rebasing: $0[connection.sent...]))
            }
            switch sent {
            case .success(let count): connection.sent += count
            case .failure(let errno): return errno == EAGAIN || errno == EWOULDBLOCK
            }
        }
        counters.answeredCount.add(1, ordering: .relaxed)
        connection.output = []
        SocketSyscalls.shutdownWrite(connection.fd)
        connection.phase = .draining
        return true
    }
}
