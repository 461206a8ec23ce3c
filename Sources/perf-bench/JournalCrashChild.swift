// PLACEHOLDER: replaced by the Journal work with a child process that tests SIGKILL.
enum JournalCrashChild {
    static func run(_ arguments: [String]) -> Int32 { 2 }
}
