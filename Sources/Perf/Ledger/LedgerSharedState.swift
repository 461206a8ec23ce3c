// What every process appending to one data directory's ledger shares: which file is current, how
// many bytes are spoken for in it, and a lock for replacing it. One small file, mapped shared.
import CPerfShims
import Glibc

/// The ledger's cross-process state: `perf-events.state` in the data directory, 4 KiB, mapped
/// `MAP_SHARED` by every writer.
///
/// Several processes share a data directory whenever two copies of one program run as one user
/// (the default directory is per app): parallel command-line runs, prefork workers, a deploy's
/// overlap. A writer that counted the file's size in its own memory and rotated by itself would,
/// after another process rotated, keep appending to `.prev` (overfilling it), and the next
/// rotation would delete those lines. So the size is one shared word, reserved with a
/// compare-and-swap, and rotation happens under `flock` on this file.
///
/// The reservation word packs the file's generation (24 bits, bumped whenever the current file is
/// replaced) with the bytes reserved in it (40 bits). A writer reserves room only in the
/// generation its descriptor belongs to, so a line is always counted against the file it lands
/// in, and a writer whose generation is stale reopens the path instead of rotating again.
///
/// Layout (little-endian): magic `PERFLED1` at 0, version (1) at 8, the reservation word alone
/// on the cache line at 64, the current file's device and inode at 128 and 136. A file with
/// another magic or version is reinitialised (under the lock) from the ledger file itself.
final class LedgerSharedState: @unchecked Sendable {
    // @unchecked: `base` is a shared mapping touched only through the C atomics, or under flock.
    /// The file's name inside the data directory.
    static let fileName = "perf-events.state"
    static let byteCount = 4096
    static let magic: UInt64 = 0x3144_454C_4652_4550  // "PERFLED1"
    static let version: UInt64 = 1
    static let magicOffset = 0
    static let versionOffset = 8
    static let wordOffset = 64
    static let deviceOffset = 128
    static let inodeOffset = 136
    static let sizeBits: UInt64 = 40
    static let sizeMask: UInt64 = (1 << sizeBits) - 1

    /// A file's identity: what `stat` of the path and `fstat` of a descriptor are compared by.
    struct Identity: Equatable {
        var device: UInt64
        var inode: UInt64
    }

    private let fd: Int32
    private let base: UnsafeMutableRawPointer
    /// The writer's seam, for the lock and the identity checks.
    private let syscalls: FileSyscalls

    private init(fd: Int32, base: UnsafeMutableRawPointer, syscalls: FileSyscalls) {
        self.fd = fd
        self.base = base
        self.syscalls = syscalls
    }

    deinit {
        syscalls.unmap(base, bytes: Self.byteCount)
        syscalls.close(fd)
    }

    /// Opens (or creates) the state file in `directory` and maps it; nil when that cannot be done
    /// (then the writer counts its file's size alone, as a single process may).
    ///
    /// The file's bytes are written (zeros) before it is mapped, so its block exists: a store to a
    /// page of a sparse file on a full disk would raise SIGBUS in the host. (Written, not
    /// `fallocate`d: not every filesystem a data directory may sit on implements that.)
    static func open(directory: String, syscalls: FileSyscalls) -> LedgerSharedState? {
        // Under a file-size limit (`ulimit -f`) below the file, fallocate would raise SIGXFSZ.
        if let limit = syscalls.fileSizeLimit(), limit < rlim_t(byteCount) { return nil }
        let path = directory + "/" + fileName
        let flags = O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW
        guard case .success(let opened) = syscalls.open(path, flags: flags, mode: 0o600) else { return nil }
        let fd = Int32(opened)
        // Under the lock: another process filling a fresh file must not zero a state already set.
        // A failed lock (a file system without flock) is gone on without, as a single process may.
        _ = syscalls.lock(fd, LOCK_EX)
        defer { _ = syscalls.lock(fd, LOCK_UN) }
        guard case .success(let info) = syscalls.fileStatus(fd), info.st_mode & S_IFMT == S_IFREG,
            info.st_size >= byteCount || writeZeros(fd, syscalls: syscalls)
        else {
            syscalls.close(fd)
            return nil
        }
        guard case .success(let mapped) = syscalls.mapShared(fd, bytes: byteCount) else {
            syscalls.close(fd)
            return nil
        }
        return LedgerSharedState(fd: fd, base: mapped, syscalls: syscalls)
    }

    /// Writes the whole file from its start (the descriptor was just opened, at offset 0; anything
    /// shorter there is a fill a kill cut short).
    private static func writeZeros(_ fd: Int32, syscalls: FileSyscalls) -> Bool {
        [UInt8](repeating: 0, count: byteCount).withUnsafeBytes { syscalls.writeAll(fd, $0) } == 0
    }

    /// Takes the cross-process lock (blocking; only writers replacing the file take it). A lock
    /// that fails (a file system without flock) is gone on without: the writer still appends.
    func lock() {
        _ = syscalls.lock(fd, LOCK_EX)
    }

    func unlock() {
        _ = syscalls.lock(fd, LOCK_UN)
    }

    private func pointer(_ offset: Int) -> UnsafeMutablePointer<UInt64> {
        (base + offset).assumingMemoryBound(to: UInt64.self)
    }

    /// Whether the file holds this version's state (checked under the lock).
    var isInitialised: Bool {
        perf_atomic_load_u64_acquire(pointer(Self.magicOffset)) == Self.magic
            && perf_atomic_load_u64(pointer(Self.versionOffset)) == Self.version
    }

    /// The reservation word: generation and reserved bytes.
    var word: UInt64 { perf_atomic_load_u64_acquire(pointer(Self.wordOffset)) }

    static func generation(_ word: UInt64) -> UInt64 { word >> sizeBits }
    static func size(_ word: UInt64) -> Int { Int(word & sizeMask) }

    /// Reserves `bytes` in the current file if `word` is still the word (a CAS).
    func reserve(_ bytes: Int, from word: UInt64) -> Bool {
        perf_atomic_cas_u64(pointer(Self.wordOffset), word, word &+ UInt64(bytes)) != 0
    }

    /// Adds bytes written outside a reservation (the newline that ends a torn line at open).
    func add(_ bytes: Int) {
        _ = perf_atomic_add_u64(pointer(Self.wordOffset), UInt64(bytes))
    }

    /// The current file's identity as last recorded (under the lock).
    var identity: Identity {
        Identity(
            device: perf_atomic_load_u64(pointer(Self.deviceOffset)),
            inode: perf_atomic_load_u64(pointer(Self.inodeOffset)))
    }

    /// Records a new current file (under the lock): its identity, its size, the next generation.
    func adopt(_ identity: Identity, size: Int) {
        let next = (Self.generation(word) &+ 1) & ((1 << (64 - Self.sizeBits)) - 1)
        perf_atomic_store_u64(pointer(Self.deviceOffset), identity.device)
        perf_atomic_store_u64(pointer(Self.inodeOffset), identity.inode)
        perf_atomic_store_u64_release(pointer(Self.wordOffset), next << Self.sizeBits | UInt64(size) & Self.sizeMask)
        if !isInitialised {
            perf_atomic_store_u64(pointer(Self.versionOffset), Self.version)
            perf_atomic_store_u64_release(pointer(Self.magicOffset), Self.magic)
        }
    }

    /// The identity of the open file `fd`.
    func identity(of fd: Int32) -> Identity? {
        guard case .success(let info) = syscalls.fileStatus(fd) else { return nil }
        return Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// The identity of the file `path` names now, nil when it names none.
    func identity(ofPath path: String) -> Identity? {
        guard case .success(let info) = syscalls.pathStatus(path) else { return nil }
        return Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }
}
