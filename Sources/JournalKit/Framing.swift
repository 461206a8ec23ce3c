// The on-disk frame of one entry: [u32 length][u32 masked crc32c][payload], little-endian.

/// Encoding and validation of entry frames, shared by the writer and recovery.
///
/// The CRC covers the length field and the payload, then is masked (rotated and offset, as
/// LevelDB does) so that an all-zero frame header never validates: a file tail the kernel
/// zero-filled yields no phantom entries. Zero-length entries are rejected for the same reason.
/// A segment's header entry uses a different mask constant, so recovery can tell the header
/// from an ordinary entry without any other marker in the file.
enum Framing {
    /// Bytes before the payload.
    static let headerSize = 8
    /// Largest payload a frame may carry (recovery treats a larger length as corruption).
    static let maxPayload = 1 << 30

    /// What a frame holds.
    enum Kind {
        case entry
        case segmentHeader

        var maskDelta: UInt32 {
            switch self {
            case .entry: 0xA282_EAD8
            case .segmentHeader: 0x5D3C_9E41
            }
        }
    }

    /// The stored checksum for a payload of the given kind.
    @inline(__always)
    static func storedChecksum(of payload: UnsafeRawBufferPointer, kind: Kind) -> UInt32 {
        mask(rawChecksum(of: payload), kind: kind)
    }

    /// CRC-32C of the little-endian length followed by the payload.
    @inline(__always)
    static func rawChecksum(of payload: UnsafeRawBufferPointer) -> UInt32 {
        var length = UInt32(truncatingIfNeeded: payload.count).littleEndian
        let seed = withUnsafeBytes(of: &length) { CRC32C.checksum($0) }
        return CRC32C.update(seed, payload)
    }

    @inline(__always)
    static func mask(_ crc: UInt32, kind: Kind) -> UInt32 {
        ((crc >> 15) | (crc << 17)) &+ kind.maskDelta
    }

    /// The 8-byte frame header for `payload`, as a value whose in-memory bytes are the header.
    @inline(__always)
    static func header(for payload: UnsafeRawBufferPointer, kind: Kind) -> UInt64 {
        let length = UInt64(UInt32(truncatingIfNeeded: payload.count))
        let checksum = UInt64(storedChecksum(of: payload, kind: kind))
        // Stored little-endian, the low half comes first: [length][crc].
        return (length | checksum << 32).littleEndian
    }

    /// One frame found in a buffer.
    struct Frame {
        var kind: Kind
        var payloadOffset: Int
        var payloadCount: Int
        var end: Int { payloadOffset + payloadCount }
    }

    /// Decodes the frame at `offset`, or nil when the bytes there are not a whole valid frame.
    ///
    /// - Parameter allowHeader: Whether a segment-header frame is acceptable here (only as the
    ///   first frame of a segment).
    @inline(__always)
    static func decode(
        _ buffer: UnsafeRawBufferPointer, at offset: Int, allowHeader: Bool
    ) -> Frame? {
        guard let base = buffer.baseAddress, buffer.count - offset >= headerSize else { return nil }
        let length = Int(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        let stored = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
        let payloadOffset = offset + headerSize
        guard length > 0, length <= maxPayload, length <= buffer.count - payloadOffset else { return nil }
        let crc = rawChecksum(of: UnsafeRawBufferPointer(start: base + payloadOffset, count: length))
        if stored == mask(crc, kind: .entry) {
            return Frame(kind: .entry, payloadOffset: payloadOffset, payloadCount: length)
        }
        if allowHeader, stored == mask(crc, kind: .segmentHeader) {
            return Frame(kind: .segmentHeader, payloadOffset: payloadOffset, payloadCount: length)
        }
        return nil
    }
}
