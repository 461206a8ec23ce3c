// A test seam: makes the allocations Perf.install depends on fail on demand, so that the paths
// that handle a failed mmap or malloc are exercised without exhausting the machine's memory.
import Synchronization

/// Allocations a test can make fail. Production code never sets any; the checks cost one relaxed
/// load on paths that already map memory or allocate (never on the span hot path).
package enum AllocationFaults {
    /// Which allocations fail, as a set of bits.
    package struct Kinds: OptionSet, Sendable {
        package let rawValue: UInt32
        package init(rawValue: UInt32) { self.rawValue = rawValue }

        /// `SpanMemory.anonymous` fails as if `mmap` had returned `ENOMEM`.
        package static let anonymousMapping = Kinds(rawValue: 1 << 0)
        /// `SpanMemory.create` fails as if `mmap` had returned `ENOMEM` (the file is removed).
        package static let fileMapping = Kinds(rawValue: 1 << 1)
        /// A flight recorder's ring cannot be allocated.
        package static let flightRing = Kinds(rawValue: 1 << 2)
    }

    private static let failing = Atomic<UInt32>(0)

    /// Makes `kinds` fail until ``reset()``.
    package static func inject(_ kinds: Kinds) { failing.bitwiseOr(kinds.rawValue, ordering: .relaxed) }

    /// Nothing fails any more.
    package static func reset() { failing.store(0, ordering: .relaxed) }

    /// Whether an allocation of `kind` is to fail now.
    package static func fails(_ kind: Kinds) -> Bool { failing.load(ordering: .relaxed) & kind.rawValue != 0 }
}
