import CPerfShims
// CRC-32C against published check values and the bitwise definition.
import Foundation
import PerfTestSupport
import Testing

@testable import JournalKit

@Suite struct CRC32CTests {
    @Test func standardCheckValues() {
        // RFC 3720 B.4 and the CRC catalogue's check value for "123456789".
        #expect(Array("123456789".utf8).withUnsafeBytes { CRC32C.checksum($0) } == 0xE306_9283)
        #expect([UInt8](repeating: 0, count: 32).withUnsafeBytes { CRC32C.checksum($0) } == 0x8A91_36AA)
        #expect([UInt8](repeating: 0xFF, count: 32).withUnsafeBytes { CRC32C.checksum($0) } == 0x62A8_AB43)
        #expect(Array(UInt8(0)...UInt8(31)).withUnsafeBytes { CRC32C.checksum($0) } == 0x46DD_794E)
    }

    /// Slicing-by-8 agrees with the byte-at-a-time definition at every length and alignment.
    @Test func matchesBitwiseDefinition() {
        var rng = SeededRandom(seed: 0xC3C3)
        let bytes = (0..<300).map { _ in UInt8.random(in: 0...255, using: &rng) }
        for start in 0..<9 {
            for end in stride(from: start, through: bytes.count, by: 7) {
                let slice = Array(bytes[start..<end])
                let fast = slice.withUnsafeBytes { CRC32C.checksum($0) }
                #expect(fast == bitwise(slice), "start \(start) end \(end)")
            }
        }
    }

    /// The CPU's instruction and slicing-by-8 agree on seeded random buffers at every alignment,
    /// length and continuation point (where the CPU has the instruction).
    @Test(.enabled(if: CRC32C.usesHardware, "this CPU has no CRC-32C instruction"))
    func hardwareMatchesSoftware() {
        var rng = SeededRandom(seed: SeededRandom.makeSeed())
        for _ in 0..<2_000 {
            let count = Int.random(in: 0...700, using: &rng)
            let start = Int.random(in: 0...15, using: &rng)
            let bytes = (0..<(start + count)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let prior = UInt32.random(in: 0...UInt32.max, using: &rng)
            bytes.withUnsafeBytes { all in
                let slice = UnsafeRawBufferPointer(rebasing: all[start...])
                let hardware = perf_crc32c_hardware(prior, slice.baseAddress!, slice.count)
                #expect(hardware == CRC32C.software(prior, slice), "start \(start) count \(count)")
            }
        }
    }

    @Test func softwareMatchesBitwiseDefinition() {
        let bytes = Array("123456789".utf8)
        #expect(bytes.withUnsafeBytes { CRC32C.software(0, $0) } == 0xE306_9283)
        #expect(bytes.withUnsafeBytes { CRC32C.software(0, $0) } == bitwise(bytes))
    }

    @Test func updateContinuesAChecksum() {
        let whole = Array("the quick brown fox jumps over the lazy dog".utf8)
        for split in 0...whole.count {
            let first = whole[..<split].withUnsafeBytes { CRC32C.checksum($0) }
            let both = whole[split...].withUnsafeBytes { CRC32C.update(first, $0) }
            #expect(both == whole.withUnsafeBytes { CRC32C.checksum($0) })
        }
    }

    private func bitwise(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return ~crc
    }
}
