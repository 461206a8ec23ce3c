// The compact, versioned binary form of session entries, and a decoder that never traps.
import Foundation

/// Encodes and decodes ``SessionEntry`` values.
///
/// Layout: `[format u8][type u8][sequence varint][fields…]`. Integers are LEB128 varints,
/// strings a varint length then UTF-8, optionals a presence byte. A decoder ignores bytes after
/// the fields it knows, so a later version may append fields to a type; a new type or a newer
/// format is skipped (``decode(_:)`` returns `nil`), never misread. Any byte sequence either
/// decodes or throws ``SessionEntryCodec/DecodingError``: journals come from disk and may be
/// damaged in ways CRCs do not catch (a bug in an older writer, a hand-edited file).
enum SessionEntryCodec {
    /// The format this build writes.
    static let format: UInt8 = 1

    enum EntryType: UInt8 {
        case start = 1
        case spanBegan = 2
        case spanClosed = 3
        case ongoingSet = 4
        case ongoingCleared = 5
        case end = 6
    }

    /// Why bytes did not decode.
    struct DecodingError: Error, Equatable, CustomStringConvertible {
        var description: String
    }

    static func encode(_ entry: SessionEntry, sequence: UInt64) -> Data {
        var writer = ByteWriter()
        writer.byte(format)
        switch entry {
        case .start(let info):
            writer.byte(EntryType.start.rawValue)
            writer.varint(sequence)
            writer.string(info.id)
            writer.varint(UInt64(UInt32(bitPattern: info.pid)))
            writer.varint(info.startWallNanos)
            writer.string(info.app.name)
            writer.string(info.app.version)
            writer.string(info.app.build)
            writer.string(info.host.os)
            writer.string(info.host.kernel)
            writer.string(info.host.arch)
            writer.string(info.host.cpuModel)
            writer.varint(UInt64(max(0, info.host.cores)))
            writer.varint(info.host.memoryBytes)
        case .spanBegan(let span):
            writer.byte(EntryType.spanBegan.rawValue)
            writer.varint(sequence)
            writer.varint(span.id)
            writer.string(span.name)
            writer.optionalString(span.key)
            writer.string(span.site)
            writer.optionalVarint(span.budgetNanos)
            writer.string(span.lifetime)
            writer.varint(span.startWallNanos)
        case .spanClosed(let id):
            writer.byte(EntryType.spanClosed.rawValue)
            writer.varint(sequence)
            writer.varint(id)
        case .ongoingSet(let marker):
            writer.byte(EntryType.ongoingSet.rawValue)
            writer.varint(sequence)
            writer.varint(marker.id)
            writer.string(marker.kind)
            writer.string(marker.name)
            writer.varint(marker.startedWallNanos)
            writer.varint(marker.lastKnownDurationNanos)
            // Sorted so equal markers encode to equal bytes.
            let pairs = marker.payload.sorted { $0.key < $1.key }
            writer.varint(UInt64(pairs.count))
            for (key, value) in pairs {
                writer.string(key)
                writer.string(value)
            }
        case .ongoingCleared(let id):
            writer.byte(EntryType.ongoingCleared.rawValue)
            writer.varint(sequence)
            writer.varint(id)
        case .end(let wallNanos):
            writer.byte(EntryType.end.rawValue)
            writer.varint(sequence)
            writer.varint(wallNanos)
        }
        return Data(writer.bytes)
    }

    /// Decodes one entry; `nil` for an entry of a newer format or an unknown type.
    static func decode(_ data: Data) throws(DecodingError) -> SequencedEntry? {
        var reader = ByteReader(data)
        let entryFormat = try reader.byte()
        let rawType = try reader.byte()
        guard entryFormat == format, let type = EntryType(rawValue: rawType) else { return nil }
        let sequence = try reader.varint()
        let entry: SessionEntry
        switch type {
        case .start:
            let id = try reader.string()
            let pid = Int32(bitPattern: UInt32(truncatingIfNeeded: try reader.varint()))
            let start = try reader.varint()
            let app = SessionInfo.App(
                name: try reader.string(), version: try reader.string(), build: try reader.string())
            let host = SessionInfo.Host(
                os: try reader.string(), kernel: try reader.string(), arch: try reader.string(),
                cpuModel: try reader.string(), cores: Int(clamping: try reader.varint()),
                memoryBytes: try reader.varint())
            entry = .start(SessionInfo(id: id, pid: pid, startWallNanos: start, app: app, host: host))
        case .spanBegan:
            entry = .spanBegan(
                JournalledSpan(
                    id: try reader.varint(), name: try reader.string(), key: try reader.optionalString(),
                    site: try reader.string(), budgetNanos: try reader.optionalVarint(), lifetime: try reader.string(),
                    startWallNanos: try reader.varint()))
        case .spanClosed:
            entry = .spanClosed(id: try reader.varint())
        case .ongoingSet:
            let id = try reader.varint()
            let kind = try reader.string()
            let name = try reader.string()
            let started = try reader.varint()
            let duration = try reader.varint()
            let count = try reader.varint()
            var payload: [String: String] = [:]
            // Each pair takes at least two bytes, so a huge count fails on the bytes, not on memory.
            for _ in 0..<min(count, UInt64(reader.remaining)) {
                let key = try reader.string()
                payload[key] = try reader.string()
            }
            entry = .ongoingSet(
                OngoingMarker(
                    id: id, kind: kind, name: name, startedWallNanos: started, lastKnownDurationNanos: duration,
                    payload: payload))
        case .ongoingCleared:
            entry = .ongoingCleared(id: try reader.varint())
        case .end:
            entry = .end(wallNanos: try reader.varint())
        }
        return SequencedEntry(sequence: sequence, entry: entry)
    }
}

/// Appends varints, strings and optionals to a byte array.
struct ByteWriter {
    var bytes: [UInt8]

    /// Reserves room for a typical entry up front: growing an array four times costs more than
    /// the encoding itself.
    init(reservingCapacity capacity: Int = 96) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    mutating func string(_ value: String) {
        varint(UInt64(value.utf8.count))
        bytes.append(contentsOf: value.utf8)
    }

    mutating func optionalString(_ value: String?) {
        byte(value == nil ? 0 : 1)
        if let value { string(value) }
    }

    mutating func optionalVarint(_ value: UInt64?) {
        byte(value == nil ? 0 : 1)
        if let value { varint(value) }
    }
}

/// Reads what ``ByteWriter`` wrote, checking every bound.
struct ByteReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ data: Data) { bytes = [UInt8](data) }

    var remaining: Int { bytes.count - offset }

    mutating func byte() throws(SessionEntryCodec.DecodingError) -> UInt8 {
        guard offset < bytes.count else { throw .init(description: "entry ends at byte \(offset), expected more") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func varint() throws(SessionEntryCodec.DecodingError) -> UInt64 {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 7) {
            let next = try byte()
            let bits = UInt64(next & 0x7F)
            // The tenth byte may only carry the top bit of a UInt64.
            guard shift < 63 || bits <= 1 else { throw .init(description: "varint overflows 64 bits") }
            value |= bits << UInt64(shift)
            if next & 0x80 == 0 { return value }
        }
        throw .init(description: "varint longer than 10 bytes")
    }

    mutating func string() throws(SessionEntryCodec.DecodingError) -> String {
        let length = try varint()
        guard length <= UInt64(remaining) else {
            throw .init(description: "string of \(length) bytes at byte \(offset) runs past the entry's end")
        }
        let end = offset + Int(length)
        defer { offset = end }
        return String(decoding: bytes[offset..<end], as: UTF8.self)
    }

    mutating func optionalString() throws(SessionEntryCodec.DecodingError) -> String? {
        switch try byte() {
        case 0: return nil
        case 1: return try string()
        case let flag: throw .init(description: "optional flag \(flag) is neither 0 nor 1")
        }
    }

    mutating func optionalVarint() throws(SessionEntryCodec.DecodingError) -> UInt64? {
        switch try byte() {
        case 0: return nil
        case 1: return try varint()
        case let flag: throw .init(description: "optional flag \(flag) is neither 0 nor 1")
        }
    }
}
