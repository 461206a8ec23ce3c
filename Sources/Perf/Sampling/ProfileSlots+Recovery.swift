// The profiles a killed process left in its `profiles.map`: the over-budget spans that were
// still open when it died, each with its profile so far. Read from the file with `read`, never
// mapped (a file cut short would be SIGBUS through a mapping), and checked field by field.
import Glibc
import PerfCore

extension ProfileSlots {
    /// One span that was open, and over its budget, when its process ended.
    struct OpenSpan: Equatable {
        var name: String
        var startWallNanos: UInt64
        var budgetNanos: UInt64
        var tid: Int32
        /// Its profile as last written; `nil` when the process died while rewriting it.
        var profile: SpanProfile?
    }

    /// What a profiles file holds: the open spans, and the profiles that found every slot in use.
    struct Recovered: Equatable {
        var open: [OpenSpan] = []
        var dropped: UInt64 = 0
        /// Slots whose bytes made no sense (a damaged file): counted, never read.
        var damaged = 0
    }

    /// The open spans of the profiles file at `path`; `nil` when there is none, or it is not
    /// one (wrong magic or version, a header that does not fit the file).
    static func recover(path: String) -> Recovered? {
        guard let bytes = readWhole(path) else { return nil }
        return recover(bytes)
    }

    /// The same from the file's bytes: never a crash, whatever they are.
    static func recover(_ bytes: [UInt8]) -> Recovered? {
        guard bytes.count >= headerBytes else { return nil }
        return bytes.withUnsafeBytes { raw -> Recovered? in
            func u64(_ offset: Int) -> UInt64 { raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self) }
            func u32(_ offset: Int) -> UInt32 { raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
            guard u64(Header.magic) == magic, u32(Header.version) == version,
                Int(u32(Header.slotBytes)) == slotBytes
            else { return nil }
            let count = min(Int(u32(Header.slotBytes + 4)), (raw.count - headerBytes) / slotBytes)
            var recovered = Recovered(dropped: u64(Header.dropped))
            for index in 0..<count {
                let base = headerBytes + index * slotBytes
                let state = u64(base + Slot.state)
                guard state == State.live.rawValue || state == State.writing.rawValue else { continue }
                let nameLength = Int(u32(base + Slot.nameLength))
                let textLength = Int(u32(base + Slot.textLength))
                guard nameLength <= nameCapacity, textLength <= textCapacity else {
                    recovered.damaged += 1
                    continue
                }
                let name = String(
                    decoding: UnsafeRawBufferPointer(
                        rebasing: raw[(base + Slot.name)..<(base + Slot.name + nameLength)]),
                    as: UTF8.self)
                var profile: SpanProfile?
                if state == State.live.rawValue, textLength > 0 {
                    let text = UnsafeRawBufferPointer(
                        rebasing: raw[(base + Slot.text)..<(base + Slot.text + textLength)])
                    profile = SpanProfile(jsonBytes: text.bindMemory(to: UInt8.self))
                }
                recovered.open.append(
                    OpenSpan(
                        name: name, startWallNanos: u64(base + Slot.startWall), budgetNanos: u64(base + Slot.budget),
                        tid: raw.loadUnaligned(fromByteOffset: base + Slot.tid, as: Int32.self), profile: profile))
            }
            recovered.open.sort { $0.startWallNanos < $1.startWallNanos }
            return recovered
        }
    }

    private static func readWhole(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size >= 0, info.st_size <= 64 << 20 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { break }
            filled += got
        }
        return Array(bytes.prefix(filled))
    }
}
