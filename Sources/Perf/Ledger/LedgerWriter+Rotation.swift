// Replacing the ledger's descriptor: rotation to `.prev` (never losing a file a failed rename
// would have kept), reopening after a failure, and backing off while rotation keeps failing.
import Glibc

extension LedgerWriter {
    /// The name the old `.prev` is moved to for the moment of a rotation.
    static let retiringFileName = "perf-events.jsonl.prev.old"
    /// The most appends between two rotation attempts while rotation fails.
    static let maximumRotationBackoff = 64

    /// How far past the cap a file may grow while rotation fails: lines beyond it are counted.
    var ceilingBytes: Int { capBytes > Int.max / 2 ? Int.max : capBytes * 2 }

    /// Rotates (renames the full file to `.prev`) and/or opens a fresh file, unless another
    /// appender already did since `expectedGeneration` was read.
    ///
    /// A rotation that fails keeps the current file and descriptor (both files stay as they
    /// were), returns nil so the append goes on past the cap (up to ``ceilingBytes``), and
    /// makes the next attempt wait 1, 2, 4 … 64 appends (or 10 ms, if that comes first).
    func replaceDescriptor(expectedGeneration: UInt64, rotate: Bool) -> LedgerError? {
        replacementLock.withLock { _ -> LedgerError? in
            let (stillNeeded, sharedGeneration) = state.withLock {
                ($0.generation == expectedGeneration && !$0.closed, $0.sharedGeneration)
            }
            guard stillNeeded else { return nil }
            shared?.lock()
            defer { shared?.unlock() }
            var rotate = rotate
            if rotate, let shared {
                // Another process may have rotated since this one found the file full (then the
                // path already names a fresh file: reopen it), or died between its rename and
                // recording the new file (then the path names a file the state does not: adopt
                // it). Rotating again in either case would delete a file of lines.
                if LedgerSharedState.generation(shared.word) != sharedGeneration
                    || shared.identity(ofPath: path) != shared.identity
                {
                    rotate = false
                }
            }
            if rotate, let errno = renameToPrevious() {
                backOff(errno: errno)
                return nil
            }
            var opened = Self.openFile(path: path, syscalls: syscalls)
            if case .failure(let error) = opened, error.errno == ENOENT {
                // The directory itself was removed: recreate it as the facade would.
                _ = syscalls.makeDirectory(directoryPath, mode: 0o700)
                opened = Self.openFile(path: path, syscalls: syscalls)
            }
            switch opened {
            case .failure(let error):
                // After a rename the old descriptor points at .prev: appending there would
                // overfill it, and rotating again would replace it. Reopen next time instead.
                state.withLock { state in
                    state.descriptor = nil
                    state.generation &+= 1
                }
                return error
            case .success(let file):
                let generation = shared.map { Self.join($0, file, replacing: rotate) } ?? 0
                let old = state.withLock { state -> LedgerDescriptor? in
                    let old = state.descriptor
                    state.descriptor = file.descriptor
                    state.size = file.size
                    state.generation &+= 1
                    state.sharedGeneration = generation
                    if rotate {
                        state.rotationBackoff = 0
                        state.rotationRetryIn = 0
                    }
                    return old
                }
                if rotate { rotations.add(1, ordering: .relaxed) }
                // The old descriptor closes when the last in-flight write releases it.
                withExtendedLifetime(old) {}
                return nil
            }
        }
    }

    /// Renames the file to `.prev` so that a failure loses nothing: the old `.prev` steps aside
    /// (`.prev.old`) first and comes back if the rename fails. The errno of a failed rotation,
    /// nil when the file was renamed or was already gone.
    ///
    /// `rename(2)` over an existing `.prev` would do it in one call, but on ext4 (auto_da_alloc)
    /// renaming over a file makes the kernel allocate the renamed file's blocks first: 140–170 µs
    /// measured against 27 µs for unlink + rename, and 35 µs for these three renames. Unlinking
    /// `.prev` before the rename (what this did before) lost it whenever the rename then failed.
    /// A kill between the steps leaves `.prev` under its stepping-aside name, as the unlink
    /// would have lost it; the next rotation replaces it.
    private func renameToPrevious() -> Int32? {
        let retiring = directoryPath + "/" + Self.retiringFileName
        let steppedAside: Bool
        switch syscalls.rename(previousPath, retiring) {
        case .success: steppedAside = true
        case .failure: steppedAside = false  // no .prev yet, or it cannot move: rename over it
        }
        switch syscalls.rename(path, previousPath) {
        case .success:
            if steppedAside { _ = syscalls.unlink(retiring) }
            return nil
        case .failure(ENOENT):
            // The file is gone (deleted under the writer): nothing to rotate; open a new one.
            if steppedAside { _ = syscalls.rename(retiring, previousPath) }
            return nil
        case .failure(let errno):
            if steppedAside { _ = syscalls.rename(retiring, previousPath) }
            return errno
        }
    }

    /// A rotation failed: keep appending to the current file (past the cap, up to the ceiling)
    /// and try again after twice as many appends as last time, at most 64; say so once.
    private func backOff(errno: Int32) {
        state.withLock { state in
            state.rotationBackoff = min(Self.maximumRotationBackoff, max(1, state.rotationBackoff * 2))
            // The append that found the rotation failing counts as the first of them.
            state.rotationRetryIn = state.rotationBackoff + 1
            state.rotationErrno = errno
            state.rotationFailedNanos = monotonicNanos()
        }
        reportOnce(
            .rotation,
            "perf: cannot rotate the ledger \(path) to \(previousPath): \(String(cString: strerror(errno))) "
                + "(errno \(errno)); both files are kept, lines go on past the \(capBytes)-byte cap up to "
                + "\(ceilingBytes) bytes and are then counted in a `dropped` line; rotation is retried after "
                + "1, 2, 4 … \(Self.maximumRotationBackoff) lines or 10 ms (reported once)")
    }
}
