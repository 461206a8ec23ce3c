// What a runtime keeps for the people who operate the program: the counters behind
// `Perf.prometheusText()`. A pipeline sink registered when the runtime is made, before any span
// can end into it.
import PerfCore

/// The operator-facing sinks of one runtime.
final class RuntimeOperations: Sendable {
    let metrics = LiveMetrics()

    init(configuration: Perf.Configuration, pipeline: RecordPipeline, clock: any PerfClock) {
        pipeline.addSink(metrics, mode: .inline)
    }

    /// Tells the counters about the prior sessions this start recovered.
    func recovered(_ sessions: [RecoveredSession]) {
        metrics.recovered(sessions)
    }

    /// Ends what the sinks still have to do.
    func finish() {}
}
