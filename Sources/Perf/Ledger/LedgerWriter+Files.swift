// Opening the ledger file and making it the shared current file: the slow paths of LedgerWriter.
import Glibc

extension LedgerWriter {
    /// Makes `opened` the shared current file if the shared state names another (or none, or
    /// `replacing`: a rotation always starts a generation), and returns its generation. Under the
    /// shared lock.
    static func join(_ shared: LedgerSharedState, _ opened: OpenedFile, replacing: Bool) -> UInt64 {
        let identity = shared.identity(of: opened.descriptor.fd)
        if replacing || !shared.isInitialised || identity == nil || shared.identity != identity {
            shared.adopt(identity ?? .init(device: 0, inode: 0), size: opened.size)
        } else if opened.newlineAdded {
            shared.add(1)
        }
        return LedgerSharedState.generation(shared.word)
    }

    /// An opened ledger file: its size, and whether opening it ended a torn line.
    struct OpenedFile {
        let descriptor: LedgerDescriptor
        let size: Int
        let newlineAdded: Bool
    }

    /// Opens the file, reads its size, and ends a line torn by an earlier crash with `\n` so
    /// the next line is not glued to it (the fragment then reads as one malformed line).
    static func openFile(path: String, syscalls: FileSyscalls) -> Result<OpenedFile, LedgerError> {
        let flags = O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC
        switch syscalls.open(path, flags: flags, mode: 0o600) {
        case .failure(let errno):
            return .failure(.open(path: path, errno: errno))
        case .success(let fd):
            let descriptor = LedgerDescriptor(fd: Int32(fd), syscalls: syscalls)
            var size = syscalls.fstat(descriptor.fd)?.size ?? 0
            var added = false
            if size > 0, let last = lastByte(path: path, size: size, syscalls: syscalls), last != UInt8(ascii: "\n") {
                let newline: [UInt8] = [UInt8(ascii: "\n")]
                if case .success(1) = newline.withUnsafeBytes({ syscalls.write(descriptor.fd, $0) }) {
                    size += 1
                    added = true
                }
            }
            return .success(OpenedFile(descriptor: descriptor, size: size, newlineAdded: added))
        }
    }

    /// The append-only descriptor cannot read, so the last byte comes through a read-only one.
    static func lastByte(path: String, size: Int, syscalls: FileSyscalls) -> UInt8? {
        guard case .success(let opened) = syscalls.openForReading(path) else { return nil }
        let fd = Int32(opened)
        defer { syscalls.close(fd) }
        return syscalls.lastByte(fd, size: size)
    }

}
