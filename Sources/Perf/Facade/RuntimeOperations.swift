// What a runtime keeps for the people who operate the program: the counters behind
// `Perf.prometheusText()` and, when the configuration asks, the stderr log of hangs and crashes.
// Both are pipeline sinks registered when the runtime is made, before any span can end into it.
import PerfCore

/// The operator-facing sinks of one runtime.
final class RuntimeOperations: Sendable {
    let metrics = LiveMetrics()
    /// The stderr log, when `Configuration.logToStandardError` is set.
    let log: StandardErrorLog?

    init(configuration: Perf.Configuration, pipeline: RecordPipeline, clock: any PerfClock) {
        log = configuration.logToStandardError.map { StandardErrorLog($0, now: { clock.monotonicNanos() }) }
        pipeline.addSink(metrics, mode: .concurrent)
        if let log { pipeline.addSink(log, mode: .inline) }
    }

    /// Tells both about the prior sessions this start recovered.
    func recovered(_ sessions: [RecoveredSession]) {
        metrics.recovered(sessions)
        log?.recovered(sessions)
    }

    /// Writes what the log still holds (waiting at most a second for a stderr that blocks).
    func finish() { log?.finish() }
}
