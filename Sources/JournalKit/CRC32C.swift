// CRC-32C (Castagnoli): the checksum that frames every journal entry. The CPU's instruction where
// it has one, slicing-by-8 otherwise.
import CPerfShims

/// CRC-32C over byte ranges: the CPU's CRC-32C instruction (SSE4.2 on x86_64, the CRC extension
/// on aarch64) when it has one, else eight bytes per step from tables built once per process.
///
/// Slicing-by-8 folds eight input bytes per iteration through eight 256-entry tables, which
/// is several times faster than the byte-at-a-time loop and needs no CPU-specific
/// instructions; the instruction is several times faster again. Every append checksums its entry
/// and recovery validates every byte of a journal through this function, so its speed shows in
/// both (the `journal` benchmarks measure each implementation).
public enum CRC32C {
    /// True when ``update(_:_:)`` uses the CPU's instruction (decided once per process).
    public static let usesHardware = perf_crc32c_hardware_available() != 0

    /// The reflected Castagnoli polynomial.
    static let polynomial: UInt32 = 0x82F6_3B78

    /// `tables[k * 256 + b]`: the CRC contribution of byte `b` followed by `k` zero bytes.
    /// Allocated once and never freed: the tables live as long as the process.
    nonisolated(unsafe) static let tables: UnsafePointer<UInt32> = {
        let tables = UnsafeMutablePointer<UInt32>.allocate(capacity: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ polynomial : crc >> 1 }
            tables[byte] = crc
        }
        for slice in 1..<8 {
            for byte in 0..<256 {
                let previous = tables[(slice - 1) * 256 + byte]
                tables[slice * 256 + byte] = (previous >> 8) ^ tables[Int(previous & 0xFF)]
            }
        }
        return UnsafePointer(tables)
    }()

    /// The CRC-32C of `bytes`.
    ///
    /// - Parameter bytes: The bytes to checksum.
    /// - Returns: The standard CRC-32C (`"123456789"` gives `0xE3069283`).
    @inlinable
    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        update(0, bytes)
    }

    /// Continues a CRC-32C over more bytes: `update(checksum(a), b) == checksum(a + b)`.
    ///
    /// - Parameters:
    ///   - crc: The checksum of the bytes before `bytes` (0 to start).
    ///   - bytes: The bytes that follow.
    /// - Returns: The checksum of the concatenation.
    public static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return crc }
        if usesHardware { return perf_crc32c_hardware(crc, base, bytes.count) }
        return software(crc, bytes)
    }

    /// ``update(_:_:)`` by slicing-by-8 whatever the CPU: the fallback, and the reference the
    /// tests and benchmarks hold the instruction against.
    public static func software(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return crc }
        let table = tables
        var state = ~crc
        var offset = 0
        let count = bytes.count
        while offset + 8 <= count {
            let low = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) ^ state
            let high = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
            state =
                table[7 * 256 + Int(low & 0xFF)]
                ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
                ^ table[5 * 256 + Int((low >> 16) & 0xFF)]
                ^ table[4 * 256 + Int(low >> 24)]
                ^ table[3 * 256 + Int(high & 0xFF)]
                ^ table[2 * 256 + Int((high >> 8) & 0xFF)]
                ^ table[1 * 256 + Int((high >> 16) & 0xFF)]
                ^ table[Int(high >> 24)]
            offset &+= 8
        }
        while offset < count {
            let byte = base.load(fromByteOffset: offset, as: UInt8.self)
            state = (state >> 8) ^ table[Int((state ^ UInt32(byte)) & 0xFF)]
            offset &+= 1
        }
        return ~state
    }
}
