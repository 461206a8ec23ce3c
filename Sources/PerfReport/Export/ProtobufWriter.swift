// The few protocol-buffer wire types the pprof export writes (varints and length-delimited
// fields), so the export needs no protobuf library.

/// Appends protocol-buffer fields to a byte buffer.
///
/// Only what `profile.proto` needs: wire type 0 (varint: `int64`, `uint64`, `bool`) and wire
/// type 2 (length-delimited: strings, embedded messages, packed repeated varints).
struct ProtobufWriter {
    private(set) var bytes: [UInt8] = []

    /// A base-128 varint, low group first; a negative value as its two's complement (10 bytes),
    /// as `int64` is encoded.
    static func appendVarint(_ value: UInt64, into out: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        out.append(UInt8(rest))
    }

    /// Field `number` as a varint; proto3 leaves a zero out.
    mutating func varint(_ number: Int, _ value: UInt64) {
        guard value != 0 else { return }
        Self.appendVarint(UInt64(number << 3), into: &bytes)
        Self.appendVarint(value, into: &bytes)
    }

    /// Field `number` as a signed varint (`int64`); zero is left out.
    mutating func int64(_ number: Int, _ value: Int64) { varint(number, UInt64(bitPattern: value)) }

    /// Field `number` as length-delimited bytes, written even when empty (a repeated string
    /// keeps its position, and the string table's first entry is the empty string).
    mutating func bytes(_ number: Int, _ value: [UInt8]) {
        Self.appendVarint(UInt64(number << 3 | 2), into: &bytes)
        Self.appendVarint(UInt64(value.count), into: &bytes)
        bytes.append(contentsOf: value)
    }

    /// Field `number` as a UTF-8 string.
    mutating func string(_ number: Int, _ value: String) { bytes(number, Array(value.utf8)) }

    /// Field `number` as an embedded message.
    mutating func message(_ number: Int, _ build: (inout ProtobufWriter) -> Void) {
        var inner = ProtobufWriter()
        build(&inner)
        bytes(number, inner.bytes)
    }

    /// Field `number` as packed repeated varints; nothing when empty.
    mutating func packed(_ number: Int, _ values: [UInt64]) {
        guard !values.isEmpty else { return }
        var payload: [UInt8] = []
        for value in values { Self.appendVarint(value, into: &payload) }
        bytes(number, payload)
    }
}
