// Keeps a file-size limit (`ulimit -f`) from killing the host: past the limit the kernel sends
// SIGXFSZ, whose default action terminates the process, before write(2) can fail with EFBIG.
import Glibc

/// Turns SIGXFSZ from "terminate" into "ignore" when nobody handles it, so a ledger or journal
/// write past `RLIMIT_FSIZE` fails with `EFBIG` and is counted as dropped like any full disk.
///
/// Found by `scripts/reliability.sh` (disk faults): a recording process under `ulimit -f` died
/// of SIGXFSZ at its first line past the limit. A handler the host installed is left alone.
enum FileSizeSignal {
    static func ignoreUnlessHandled() {
        var current = sigaction()
        guard sigaction(SIGXFSZ, nil, &current) == 0 else { return }
        let isDefault = current.__sigaction_handler.sa_handler == nil && current.sa_flags & SA_SIGINFO == 0
        guard isDefault else { return }
        var ignore = sigaction()
        ignore.__sigaction_handler.sa_handler = SIG_IGN
        sigemptyset(&ignore.sa_mask)
        _ = sigaction(SIGXFSZ, &ignore, nil)
    }
}
