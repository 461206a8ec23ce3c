// Trace and span ids derived from a session id: the same report always exports the same ids, so
// a collector that receives an export twice sees the same spans, never a second copy.
import Perf

enum ExportIDs {
    /// 32 lowercase hex digits for the session's trace; never all zero (an invalid trace id).
    static func traceID(session: String) -> String {
        let seed = fnv1a(session)
        return hex(nonZero(splitMix(seed ^ 0x7472_6163_6531))) + hex(splitMix(seed ^ 0x7472_6163_6532))
    }

    /// 16 lowercase hex digits for span `index` of the session (0 is the session's root span);
    /// never all zero (an invalid span id).
    static func spanID(session: String, index: Int) -> String {
        hex(nonZero(splitMix(fnv1a(session) &+ UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15)))
    }

    /// FNV-1a, 64-bit, of the UTF-8 bytes.
    static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }

    /// SplitMix64's finaliser: spreads nearby inputs (index 1, 2, 3) over the whole range.
    static func splitMix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    static func nonZero(_ value: UInt64) -> UInt64 { value == 0 ? 1 : value }

    /// 16 lowercase hex digits, zero-padded.
    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
