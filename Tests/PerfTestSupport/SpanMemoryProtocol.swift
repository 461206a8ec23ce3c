// What `perf-test-child span-memory` and the code that kills it agree on: the ring's size, how a
// span's budget names who ended it, and the acknowledgement line. One definition for the child,
// the kill test and the reliability scenario.
public enum SpanMemoryProtocol {
    /// Flight recorder slots of the child.
    public static let ringCapacity = 4096

    /// The budget in ms that names span `index` of `thread` (under budget, so no ledger line).
    public static func budgetMs(thread: Int, index: Int) -> Double { 1_000_000 + Double(thread * 100_000 + index) }

    /// `<thread> <index>`, printed by the child after each `end()` returned.
    public struct Acknowledgement: Hashable, Sendable {
        public var thread: Int
        public var index: Int

        public init?(_ line: String) {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let thread = Int(parts[0]), let index = Int(parts[1]) else { return nil }
            self.thread = thread
            self.index = index
        }

        /// The budget the child gave the span, in nanoseconds.
        public var budgetNanos: UInt64 { UInt64(SpanMemoryProtocol.budgetMs(thread: thread, index: index) * 1_000_000) }
    }
}
