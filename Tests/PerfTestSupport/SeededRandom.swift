// The one seeded generator of the tests, the children they launch and the reliability
// scenarios: a failing randomised run replays exactly from its seed.
import Foundation

/// SplitMix64: tiny, fast and the same sequence for the same seed on every platform.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    public private(set) var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform double in (0, 1], never 0 so that `log` is finite.
    public mutating func unitInterval() -> Double {
        Double((next() >> 11) + 1) / Double(1 << 53)
    }

    /// A standard normal sample (Box–Muller).
    public mutating func normal() -> Double {
        let u1 = unitInterval()
        let u2 = unitInterval()
        return (-2 * Foundation.log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }

    /// The seed of a randomised test: `PERF_TEST_SEED` when set (to replay a failure), else a
    /// fresh one. Printed either way, with the caller's name, so any failure can be replayed;
    /// tests also put the seed in their failure messages.
    public static func makeSeed(_ caller: String = #function) -> UInt64 {
        let seed: UInt64
        if let text = ProcessInfo.processInfo.environment["PERF_TEST_SEED"], let given = UInt64(text) {
            seed = given
        } else {
            seed = UInt64.random(in: 0...UInt64.max)
        }
        print("\(caller): seed \(seed) (PERF_TEST_SEED=\(seed) replays it)")
        return seed
    }
}
