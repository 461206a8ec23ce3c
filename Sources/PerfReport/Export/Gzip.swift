// A gzip file (RFC 1952) without zlib: one member whose deflate stream (RFC 1951) is made of
// stored blocks. Nothing is compressed, and every gzip reader accepts it.

/// Wraps bytes in a gzip member of stored (uncompressed) deflate blocks.
enum Gzip {
    /// The most a stored block holds (its length is 16 bits).
    static let maximumBlockBytes = 65_535

    /// `data` as a gzip file: the 10-byte header (no name, no time, OS unknown), stored blocks of
    /// at most ``maximumBlockBytes`` (the last marked final; one empty block for empty input),
    /// then the CRC-32 and the length modulo 2^32, little-endian.
    static func wrap(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xFF]
        out.reserveCapacity(data.count + data.count / maximumBlockBytes * 5 + 23)
        var start = 0
        repeat {
            let end = min(start + maximumBlockBytes, data.count)
            // BFINAL in bit 0, BTYPE 00 (stored) in bits 1-2; the rest of the byte is padding.
            out.append(end == data.count ? 0x01 : 0x00)
            let length = UInt16(end - start)
            appendLittleEndian(UInt32(length), bytes: 2, into: &out)
            appendLittleEndian(UInt32(~length), bytes: 2, into: &out)
            out.append(contentsOf: data[start..<end])
            start = end
        } while start < data.count
        appendLittleEndian(CRC32.checksum(data), bytes: 4, into: &out)
        appendLittleEndian(UInt32(truncatingIfNeeded: data.count), bytes: 4, into: &out)
        return out
    }

    private static func appendLittleEndian(_ value: UInt32, bytes: Int, into out: inout [UInt8]) {
        for index in 0..<bytes { out.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }
}

/// CRC-32 as gzip and zip use it (IEEE 802.3, reflected polynomial 0xEDB88320): not the
/// CRC-32C (Castagnoli) of the journal's frames.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var crc = UInt32(index)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        return crc
    }

    /// The checksum of `data` (`"123456789"` gives 0xCBF43926).
    static func checksum(_ data: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return ~crc
    }
}
