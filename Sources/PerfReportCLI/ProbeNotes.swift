// The USDT probes of an ELF executable, read from its `.note.stapsdt` notes (the SystemTap SDT
// format, version 3), with the file offsets a uprobe needs: the probe's `nop` and its semaphore.

/// One probe site of provider `perf` (or any provider) in an executable.
package struct ProbeSite: Sendable, Equatable {
    package var provider: String
    package var name: String
    /// The `nop`'s file offset (what a uprobe is placed at).
    package var offset: UInt64
    /// The semaphore's file offset (the uprobe's reference counter), or nil when the probe has none.
    package var semaphoreOffset: UInt64?
    /// The note's argument string, e.g. `8@%rax 8@%rcx`.
    package var arguments: String

    /// The argument operands (`%rax`, `x0`) without their sizes.
    package var operands: [String] {
        arguments.split(separator: " ").map { $0.split(separator: "@", maxSplits: 1).last.map(String.init) ?? "" }
    }
}

/// Reads the SDT notes of an ELF64 little-endian file.
package enum ProbeNotes {
    package enum Failure: Error, CustomStringConvertible, Equatable {
        case notELF64(String)
        case noNotes(String)

        package var description: String {
            switch self {
            case .notELF64(let path): return "\(path): not a 64-bit little-endian ELF file"
            case .noNotes(let path):
                return "\(path): no USDT probes of provider 'perf' (.note.stapsdt); is this a program that links Perf?"
            }
        }
    }

    /// Every probe site of `provider` in `bytes` (the file at `path`, for messages).
    package static func sites(in bytes: [UInt8], path: String, provider: String = "perf") throws(Failure) -> [ProbeSite]
    {
        guard bytes.count > 64, bytes[0] == 0x7F, bytes[1] == 0x45, bytes[2] == 0x4C, bytes[3] == 0x46, bytes[4] == 2,
            bytes[5] == 1
        else { throw .notELF64(path) }
        func u16(_ at: Int) -> Int { at + 2 <= bytes.count ? Int(bytes[at]) | Int(bytes[at + 1]) << 8 : 0 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        func u64(_ at: Int) -> UInt64 { at + 8 <= bytes.count ? UInt64(u32(at)) | UInt64(u32(at + 4)) << 32 : 0 }
        // Section headers, by name.
        let shoff = Int(u64(0x28)), shentsize = u16(0x3A), shnum = u16(0x3C), shstrndx = u16(0x3E)
        typealias Section = (name: String, address: UInt64, offset: Int, size: Int)
        var sections: [Section] = []
        let strtab = shoff + shstrndx * shentsize
        let strtabOffset = Int(u64(strtab + 24))
        for index in 0..<shnum {
            let header = shoff + index * shentsize
            guard header + 64 <= bytes.count else { break }
            sections.append(
                (
                    cString(bytes, at: strtabOffset + u32(header)), u64(header + 16), Int(u64(header + 24)),
                    Int(u64(header + 32))
                ))
        }
        // Loadable segments: virtual address → file offset.
        let phoff = Int(u64(0x20)), phentsize = u16(0x36), phnum = u16(0x38)
        var loads: [(vaddr: UInt64, offset: UInt64, size: UInt64)] = []
        for index in 0..<phnum {
            let header = phoff + index * phentsize
            if u32(header) == 1 { loads.append((u64(header + 16), u64(header + 8), u64(header + 32))) }
        }
        func fileOffset(_ address: UInt64) -> UInt64? {
            loads.first { address >= $0.vaddr && address < $0.vaddr + $0.size }.map { address - $0.vaddr + $0.offset }
        }
        let base = sections.first { $0.name == ".stapsdt.base" }?.address
        var sites: [ProbeSite] = []
        for section in sections where section.name == ".note.stapsdt" {
            var at = section.offset
            let end = min(section.offset + section.size, bytes.count)
            while at + 12 <= end {
                let nameSize = u32(at), descSize = u32(at + 4), type = u32(at + 8)
                let nameAt = at + 12
                let descAt = nameAt + (nameSize + 3) & ~3
                at = descAt + (descSize + 3) & ~3
                guard type == 3, cString(bytes, at: nameAt) == "stapsdt", descSize >= 24, descAt + descSize <= end
                else { continue }
                var pc = u64(descAt), semaphore = u64(descAt + 16)
                // Addresses in the note are link-time; `.stapsdt.base` says how far they moved.
                if let base {
                    let noteBase = u64(descAt + 8)
                    pc = pc &+ base &- noteBase
                    if semaphore != 0 { semaphore = semaphore &+ base &- noteBase }
                }
                let strings = descAt + 24
                let probeProvider = cString(bytes, at: strings)
                let name = cString(bytes, at: strings + probeProvider.utf8.count + 1)
                let arguments = cString(bytes, at: strings + probeProvider.utf8.count + name.utf8.count + 2)
                guard probeProvider == provider, let offset = fileOffset(pc) else { continue }
                sites.append(
                    ProbeSite(
                        provider: probeProvider, name: name, offset: offset,
                        semaphoreOffset: semaphore == 0 ? nil : fileOffset(semaphore), arguments: arguments))
            }
        }
        guard !sites.isEmpty else { throw .noNotes(path) }
        return sites
    }

    static func cString(_ bytes: [UInt8], at offset: Int) -> String {
        guard offset >= 0, offset < bytes.count else { return "" }
        let end = bytes[offset...].firstIndex(of: 0) ?? bytes.count
        return String(decoding: bytes[offset..<end], as: UTF8.self)
    }
}
