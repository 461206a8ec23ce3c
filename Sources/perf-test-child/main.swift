// perf-test-child: the child processes that tests and reliability scenarios launch, SIGKILL or
// disturb (`perf-test-child <kind> …`). Not a tool for users: each kind reads its arguments and
// never returns normally unless told to stop. Test targets that launch it list
// `.target(name: "perf-test-child")` among their dependencies so SwiftPM builds it.
import Foundation

let children: [String: ([String]) -> Int32] = [
    "journal-append": JournalCrashChild.run,
    "ledger-spans": LedgerCrashChild.run,
    "session": SessionCrashChild.run,
    "facade": FacadeCrashChild.run,
    "metrics-endpoint": MetricsEndpointChild.run,
    "watchdog": WatchdogCrashChild.run,
    "watchdog-matrix": WatchdogMatrixChild.run,
    "reliability": ReliabilityChild.run,
    "span-memory": SpanMemoryChild.run,
    "sessions": SessionIndexChild.run,
    "systemd": SystemdChild.run,
    "hang-log": HangLogChild.run,
    "sanitizer-host": SanitizerHostChild.run,
    "probes": ProbesChild.run,
    "quiet-writer": QuietWriterChild.run,
    "install-cycles": InstallCyclesChild.run,
    "burst-kill": BurstKillChild.run,
    "span-names": SpanNamesChild.run,
]

let arguments = Array(CommandLine.arguments.dropFirst())
guard let kind = arguments.first, let child = children[kind] else {
    let kinds = children.keys.sorted().joined(separator: ", ")
    FileHandle.standardError.write(Data("usage: perf-test-child <kind> [<argument> ...]; kinds: \(kinds)\n".utf8))
    exit(2)
}
exit(child(Array(arguments.dropFirst())))
