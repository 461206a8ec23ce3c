// What the ledger writer does when something is wrong: a full file it cannot rotate, failures
// said once on stderr, and the last gap report at close.
import Glibc
import Synchronization

extension LedgerWriter {
    /// A kind of problem, said once per writer.
    enum Problem: UInt8 {
        /// A line could not be written (write, short write, reopen).
        case write = 1
        /// The full file could not be renamed to `.prev`.
        case rotation = 2
    }

    /// Says `message` through `report` the first time `problem` happens, never again.
    func reportOnce(_ problem: Problem, _ message: @autoclosure () -> String) {
        let bit = problem.rawValue
        guard reported.bitwiseOr(bit, ordering: .relaxed).oldValue & bit == 0 else { return }
        report(message())
    }

    /// A line was lost to `error`: the first such loss is said, with what becomes of the next ones.
    func reportFailure(_ error: LedgerError) {
        reportOnce(
            .write,
            "perf: \(error.message.prefix { $0 != ";" }); lines that cannot be written are counted and "
                + "reported in a `dropped` line once writing works again (reported once)")
    }

    /// The file is full: rotate, unless rotation is backing off after a failure; then the line goes
    /// past the cap (nil) up to the ceiling, beyond which it is refused (and counted).
    ///
    /// The back-off ends after its count of appends or ``rotationRetryNanos``, whichever comes
    /// first: a busy writer does not retry on every line, and one that writes a line a minute
    /// does not wait 64 minutes for its files to rotate once the fault is gone.
    func full(size: Int, _ state: inout State) -> Reservation? {
        if state.rotationRetryIn == 0
            || monotonicNanos() &- state.rotationFailedNanos >= Self.rotationRetryNanos
        {
            return .replace(generation: state.generation, rotate: true)
        }
        guard size > ceilingBytes else { return nil }
        state.rotationRetryIn -= 1
        return .overCeiling(errno: state.rotationErrno)
    }

    /// How long a failed rotation waits at most before the next attempt: 10 ms.
    static let rotationRetryNanos: UInt64 = 10_000_000

    /// `CLOCK_MONOTONIC_COARSE` (a vDSO read, no syscall), in nanoseconds.
    @Sendable static func coarseMonotonicNanos() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }

    /// At close, lines still counted as dropped get their `dropped` line (past the cap if need be:
    /// one line), reopening the file first if a failure had closed it. If that fails too, they are
    /// lost without a line: the failure was already said.
    func writeFinalGapReport() {
        let reopen = state.withLock { state -> UInt64? in
            !state.closed && state.pendingDropped > 0 && state.descriptor == nil ? state.generation : nil
        }
        if let reopen { _ = replaceDescriptor(expectedGeneration: reopen, rotate: false) }
        let pending = state.withLock { state -> (descriptor: LedgerDescriptor, line: [UInt8], count: Int)? in
            guard !state.closed, state.pendingDropped > 0, let descriptor = state.descriptor else { return nil }
            var gap = LedgerEvent(
                kind: .dropped, name: "ledger", session: state.lastSession, timestampMs: state.lastTimestampMs)
            gap.count = state.pendingDropped
            gap.extra["cause"] = .string(LedgerWriter.writeCause)
            var line: [UInt8] = []
            LedgerEncoder.encodeLine(gap, into: &line)
            let count = state.pendingDropped
            state.pendingDropped = 0
            state.size += line.count
            if let shared, LedgerSharedState.generation(shared.word) == state.sharedGeneration {
                shared.add(line.count)
            }
            return (descriptor, line, count)
        }
        guard let pending else { return }
        let result = pending.line.withUnsafeBytes { syscalls.write(pending.descriptor.fd, $0) }
        if case .success(let written) = result, written == pending.line.count {
            linesWritten.add(1, ordering: .relaxed)
            bytesWritten.add(written, ordering: .relaxed)
            gapReports.add(1, ordering: .relaxed)
        } else {
            state.withLock { $0.pendingDropped += pending.count }
        }
    }
}
