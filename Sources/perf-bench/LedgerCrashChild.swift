// PLACEHOLDER: replaced by the Ledger work with a child process that tests SIGKILL.
enum LedgerCrashChild {
    static func run(_ arguments: [String]) -> Int32 { 2 }
}
