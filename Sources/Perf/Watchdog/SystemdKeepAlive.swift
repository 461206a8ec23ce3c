// The opt-in link from a hang watchdog to systemd's service watchdog (`WatchdogSec=`): while the
// target answers, `WATCHDOG=1` at half of `$WATCHDOG_USEC`; once a hang has lasted past the
// limit, silence, so systemd kills and restarts the service — after the hang is journalled, so
// the next start reports it as fatal with its culprit.
import Glibc

extension Perf.HangWatchdog {
    /// Feeds systemd's service watchdog from a hang watchdog's thread, for as long as the
    /// monitored target answers.
    ///
    /// With `WatchdogSec=` in its unit, systemd sets `$WATCHDOG_USEC` and kills the service when
    /// no `WATCHDOG=1` arrives for that long. Set ``Configuration/systemdWatchdog`` and the hang
    /// watchdog sends `WATCHDOG=1` every half `$WATCHDOG_USEC` (on its next tick, at most one
    /// ``Configuration/interval`` later) while its pings are answered. When a ping has gone
    /// unanswered for ``hangLimit``, it stops sending: systemd then kills the service within
    /// `WatchdogSec=` (its `WatchdogSignal=`, SIGABRT by default) and restarts it as `Restart=`
    /// says. The hang is journalled as in progress before the keep-alive stops, so the next start
    /// reports it as a fatal hang with its culprit. If the target answers again first, sending
    /// resumes at once.
    ///
    /// ```swift
    /// var configuration = Perf.HangWatchdog.Configuration()
    /// configuration.systemdWatchdog = .init(hangLimit: .seconds(20))
    /// let watchdog = Perf.HangWatchdog(monitoring: .queue(requestQueue), configuration: configuration)
    /// watchdog.start()   // keep `watchdog`: dropping it stops the thread, and the keep-alive
    /// ```
    ///
    /// The link does nothing unless `$WATCHDOG_USEC` is set and `$WATCHDOG_PID` is unset or this
    /// process's id; a set but unusable `$WATCHDOG_USEC`, `$WATCHDOG_PID` or `$NOTIFY_SOCKET` is
    /// reported once on stderr at ``Perf/HangWatchdog/start()``, as is the first failed send.
    ///
    /// - Note: Only while the watchdog runs: ``Perf/HangWatchdog/stop()`` and ``Perf/shutdown()``
    ///   end the keep-alive too, so stop them only on the way out. While the watchdog is paused
    ///   (``Perf/HangWatchdog/pause(reason:)``) the keep-alive goes on. A ping sent within
    ///   ``Configuration/startupGrace`` counts only from the grace period's end. Link one
    ///   watchdog per process: systemd cannot tell several apart, and any one of them keeps it fed.
    public struct SystemdLink: Sendable {
        /// How long a ping may go unanswered (the watchdog's own stalls removed) before
        /// `WATCHDOG=1` stops. `nil` means ``Configuration/fatalAfter`` when set, else
        /// ``Configuration/ongoingAfter``. Never shorter than ``Configuration/ongoingAfter``: the
        /// hang is journalled first. systemd kills the service up to `WatchdogSec=` later.
        public var hangLimit: Duration?

        /// The environment to read instead of the process's (tests).
        var environment: [String: String]?

        /// Creates a link.
        /// - Parameter hangLimit: how long the target may not answer before the keep-alive stops.
        public init(hangLimit: Duration? = nil) {
            self.hangLimit = hangLimit
        }
    }
}

/// The keep-alive's schedule, fed one watchdog tick at a time.
struct SystemdKeepAlive {
    /// Time between two `WATCHDOG=1`: half of `$WATCHDOG_USEC`.
    let periodNanos: UInt64
    /// How long a ping may go unanswered before sending stops.
    let limitNanos: UInt64
    private var nextDueNanos: UInt64?

    init(periodNanos: UInt64, limitNanos: UInt64) {
        self.periodNanos = max(periodNanos, 1)
        self.limitNanos = limitNanos
    }

    /// Whether to send `WATCHDOG=1` now: due, and the target has not gone unanswered for the
    /// limit. The first tick sends; a tick after the target answers again sends if one is due.
    mutating func shouldSend(nowNanos: UInt64, unansweredNanos: UInt64) -> Bool {
        guard unansweredNanos < limitNanos else { return false }
        if let due = nextDueNanos, nowNanos < due { return false }
        nextDueNanos = nowNanos + periodNanos
        return true
    }

    /// The limit a link gives under a configuration: its own, else `fatalAfter`, else
    /// `ongoingAfter`; never below `ongoingAfter`.
    static func limitNanos(_ link: Perf.HangWatchdog.SystemdLink, _ configuration: Perf.HangWatchdog.Configuration)
        -> UInt64
    {
        let ongoing = configuration.ongoingAfter.watchdogNanos
        let chosen = link.hangLimit?.watchdogNanos ?? configuration.fatalAfter?.watchdogNanos ?? ongoing
        return max(chosen, ongoing)
    }
}

/// The keep-alive and its socket, as the watchdog thread drives them.
struct SystemdKeepAliveSender {
    private var schedule: SystemdKeepAlive
    private let notifier: SystemdNotifier
    private let report: (String) -> Void
    private var failureReported = false

    /// `nil` when the configuration has no link or the environment no watchdog for this process
    /// (an unusable one is reported).
    init?(
        configuration: Perf.HangWatchdog.Configuration, pid: pid_t = getpid(),
        report: @escaping (String) -> Void = PerfState.reportToStandardError
    ) {
        guard let link = configuration.systemdWatchdog else { return nil }
        let environment = link.environment ?? Self.processEnvironment()
        switch SystemdWatchdogEnvironment(environment: environment, pid: pid) {
        case .off:
            return nil
        case .invalid(let why):
            report("perf: not feeding systemd's watchdog: \(why)")
            return nil
        case .on(let notifier, let timeoutNanos):
            schedule = SystemdKeepAlive(
                periodNanos: timeoutNanos / 2, limitNanos: SystemdKeepAlive.limitNanos(link, configuration))
            self.notifier = notifier
            self.report = report
        }
    }

    /// One watchdog tick: sends `WATCHDOG=1` when due and the target has answered in time.
    mutating func tick(nowNanos: UInt64, unansweredNanos: UInt64) {
        guard schedule.shouldSend(nowNanos: nowNanos, unansweredNanos: unansweredNanos) else { return }
        let failure = notifier.send("WATCHDOG=1")
        guard failure != 0, !failureReported else { return }
        failureReported = true
        report("perf: WATCHDOG=1 to systemd failed: \(String(cString: strerror(failure))) (reported once)")
    }

    /// The variables the link reads, from the process's environment.
    private static func processEnvironment() -> [String: String] {
        var environment: [String: String] = [:]
        for name in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"] {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        return environment
    }
}
