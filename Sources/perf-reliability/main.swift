// perf-reliability: Perf's reliability scenarios (kills, crash story, disk faults, bad input,
// concurrency, watchdog false positives, privacy), one per run, each printing one JSON result
// line; `scripts/reliability.sh` runs them all under `timeout` and writes Reports/RELIABILITY.md.
// The children it kills and disturbs are `perf-test-child`, built beside it.
import Foundation

exit(Reliability.main(Array(CommandLine.arguments.dropFirst())))
