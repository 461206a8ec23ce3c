// PLACEHOLDER: replaced by the Session work with a child process that tests SIGKILL.
enum SessionCrashChild {
    static func run(_ arguments: [String]) -> Int32 { 2 }
}
