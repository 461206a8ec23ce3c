// Samples another thread's stack through the CPerfShims SIGPROF handler and turns the raw
// addresses into demangled frames, on the watchdog thread (never inside the signal handler).
import CPerfShims
import Glibc

/// One successful stack sample of one thread.
struct ThreadSample: Sendable {
    var tid: Int32
    /// Innermost first; the first address is the interrupted (or blocked) instruction.
    var addresses: [UInt]
    /// The stack was deeper than the sampler keeps.
    var truncated: Bool
    /// Name, state and wait channel read just before the sample.
    var thread: Perf.HangWatchdog.ThreadInfo
    /// The system call the thread was blocked in, when it was (read from `/proc`, no signal).
    var syscall: perf_thread_syscall?
    /// The sample took a SIGPROF (the thread was running, so no call of its could be cut short).
    var signalled: Bool
}

/// Why a sample could not be taken.
enum SampleFailure: Error, Equatable {
    /// The thread is running and may not be signalled: nothing to report.
    case notBlocked
    case unavailable(String)
    case failed(String)
}

/// Takes one thread's stack without changing what the thread does.
///
/// A thread blocked in a system call is never signalled: a handler would cut its `sleep`,
/// `poll` or `read` short (EINTR), whatever `SA_RESTART` says. Its registers at the call are in
/// `/proc/self/task/<tid>/syscall`, and its stack is unwound from there with the images' CFI
/// (`perf_remote_unwind`). Only a thread that is running, and so has no call to interrupt, gets
/// SIGPROF and unwinds itself in the handler.
enum StackSampler {
    /// How long to wait for the target thread's handler before giving up on it: a running thread
    /// on a saturated host may wait a few scheduler slices for a core.
    static let timeoutNanos: UInt64 = 50_000_000

    /// Installs the process-wide handler on first use; `nil` when sampling works, else why not.
    static let unavailableReason: String? = {
        switch perf_stack_sampler_install() {
        case 0: return nil
        case 1: return "SIGPROF in use by another handler (a profiler?)"
        default: return "cannot install the SIGPROF handler"
        }
    }()

    /// Samples thread `tid` of this process; a running thread is signalled only when
    /// `allowSignal` is set.
    static func sample(tid: Int32, allowSignal: Bool = true) -> Result<ThreadSample, SampleFailure> {
        sample(
            tid: tid, allowSignal: allowSignal, windowNanos: allowSignal ? runningWindowNanos : 300_000,
            minimumAttempts: allowSignal ? 10 : 3, pauseMicroseconds: 100)
    }

    /// One sample of an over-budget span's thread, every few milliseconds: a blocked thread is
    /// read from /proc; a running one is signalled only with `maySignal`, which the caller
    /// grants to a thread that has been mostly on a CPU since its previous sample.
    ///
    /// `/proc/<tid>/syscall` says "running" for a thread that is merely runnable, and a thread
    /// woken from a `poll` or `read` is runnable, still inside the call, until it gets a CPU: on
    /// a loaded machine that can last milliseconds, and a signal then makes the call return
    /// EINTR. Such a thread was blocked at its previous sample and used no CPU since, so it is
    /// never signalled; its sample is missed, never forced. Returns the sample and whether the
    /// thread was seen running.
    static func sampleForSpan(tid: Int32, maySignal: Bool) -> (Result<ThreadSample, SampleFailure>, running: Bool) {
        let looked = sample(
            tid: tid, allowSignal: false, windowNanos: 20_000, minimumAttempts: 2, pauseMicroseconds: 0,
            describeThread: false)
        guard case .failure(.notBlocked) = looked else { return (looked, false) }
        guard maySignal else {
            return (.failure(.failed("thread \(tid) has not been on a CPU since its previous sample")), true)
        }
        // Signalled at once: every microsecond between the look and the signal is one in which
        // the thread could enter a system call. (Its name is not needed for a span's profile.)
        var buffer = [UInt](repeating: 0, count: Int(PERF_STACK_MAX_FRAMES))
        let unnamed = Perf.HangWatchdog.ThreadInfo(tid: tid, name: "", state: "R", waitChannel: nil)
        return (signalled(tid: tid, thread: unnamed, buffer: &buffer), true)
    }

    /// CPU time thread `tid` of this process has used, from its per-thread CPU clock.
    static func threadCPUNanos(_ tid: Int32) -> UInt64? {
        // MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED): ~tid << 3 | per-thread (4) | sched (2).
        let clock = clockid_t(bitPattern: (~UInt32(bitPattern: tid)) << 3 | 6)
        var now = timespec()
        guard clock_gettime(clock, &now) == 0 else { return nil }
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// With `describeThread` false, the thread's name, state and wait channel are not read (two
    /// /proc files): a span's profile does not show them.
    private static func sample(
        tid: Int32, allowSignal: Bool, windowNanos: UInt64, minimumAttempts: Int, pauseMicroseconds: UInt32,
        describeThread: Bool = true
    ) -> Result<ThreadSample, SampleFailure> {
        let thread =
            describeThread
            ? ProcProbe.thread(tid) : Perf.HangWatchdog.ThreadInfo(tid: tid, name: "", state: nil, waitChannel: nil)
        var buffer = [UInt](repeating: 0, count: Int(PERF_STACK_MAX_FRAMES))
        var call = perf_thread_syscall()
        // A thread seen running is watched for a moment before it may be signalled: one that
        // blocks within that window (a loop of short sleeps, a worker between two reads) is read
        // when it blocks, and only a thread that stays on the CPU throughout gets SIGPROF. A thread
        // that wakes while its stack is copied is read again.
        // Threads that may not be signalled anyway (bystanders) get only a retry or two.
        // The window ends only after a few attempts too: on a saturated host the watchdog thread
        // itself may lose the CPU for a whole window between two attempts (or in the middle of
        // one, while a thread in a loop of short sleeps wakes), and one look is no watch.
        let deadline = perf_monotonic_ns() + windowNanos
        var attempts = 0
        var seenBlocked = false
        while true {
            let count = buffer.withUnsafeMutableBufferPointer {
                perf_remote_unwind(tid, $0.baseAddress, Int32($0.count), &call)
            }
            if count > 0 {
                return .success(
                    ThreadSample(
                        tid: tid, addresses: Array(buffer[0..<Int(count)]),
                        truncated: count == PERF_STACK_MAX_FRAMES, thread: thread, syscall: call, signalled: false))
            }
            if call.state == Int32(PERF_THREAD_GONE) { return .failure(.failed("thread \(tid) exited")) }
            if count == -3 { return .failure(.unavailable("cannot unwind a blocked thread on this architecture")) }
            if count == -4 { return .failure(.failed("the stack of thread \(tid) could not be read")) }
            if count == -2 || call.state == Int32(PERF_THREAD_BLOCKED) { seenBlocked = true }
            attempts += 1
            if attempts >= minimumAttempts, perf_monotonic_ns() >= deadline { break }
            if pauseMicroseconds > 0 { usleep(pauseMicroseconds) }
        }
        if seenBlocked { return .failure(.failed("thread \(tid) kept moving between system calls")) }
        guard allowSignal else { return .failure(.notBlocked) }
        return signalled(tid: tid, thread: thread, buffer: &buffer)
    }

    /// How long a running thread is watched for a system call before it is signalled.
    static let runningWindowNanos: UInt64 = 2_000_000

    private static func signalled(
        tid: Int32, thread: Perf.HangWatchdog.ThreadInfo, buffer: inout [UInt]
    ) -> Result<ThreadSample, SampleFailure> {
        if let reason = unavailableReason { return .failure(.unavailable(reason)) }
        let count = buffer.withUnsafeMutableBufferPointer {
            perf_stack_sample_thread(tid, $0.baseAddress, Int32($0.count), timeoutNanos)
        }
        switch count {
        case ..<(-3): return .failure(.failed("thread \(tid) did not answer SIGPROF within 50 ms"))
        case -3: return .failure(.failed("thread \(tid) exited"))
        case -2: return .failure(.failed("every sample slot was busy"))
        case ..<0: return .failure(.unavailable("the SIGPROF sampler is not installed"))
        default:
            return .success(
                ThreadSample(
                    tid: tid, addresses: Array(buffer[0..<Int(count)]),
                    truncated: count == PERF_STACK_MAX_FRAMES, thread: thread, syscall: nil, signalled: true))
        }
    }
}

/// Addresses to frames, with a cache: stuck threads repeat the same addresses sample after sample.
struct Symbolicator {
    private var cache: [UInt: Perf.HangWatchdog.Frame] = [:]

    init() {}

    /// Frames for one sample, innermost first.
    mutating func frames(_ addresses: [UInt]) -> [Perf.HangWatchdog.Frame] {
        addresses.enumerated().map { index, address in frame(address, isReturnAddress: index > 0) }
    }

    /// One frame. Return addresses point after the call, possibly into the next function: look
    /// up the byte before.
    mutating func frame(_ address: UInt, isReturnAddress: Bool) -> Perf.HangWatchdog.Frame {
        if let cached = cache[address] { return cached }
        let lookup = isReturnAddress && address > 0 ? address - 1 : address
        var symbol = [CChar](repeating: 0, count: 1024)
        var image = [CChar](repeating: 0, count: 512)
        var offset: UInt = 0
        let found = perf_symbolicate(lookup, &symbol, symbol.count, &image, image.count, &offset)
        let mangled =
            found == 1 ? String(decoding: symbol.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
        let imagePath = String(decoding: image.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let frame = Perf.HangWatchdog.Frame(
            address: address, symbol: mangled.map(Self.demangle),
            offset: isReturnAddress ? offset + 1 : offset, image: imagePath,
            isSystem: Self.isSystem(image: imagePath, mangled: mangled))
        if cache.count > 8192 { cache.removeAll(keepingCapacity: true) }
        cache[address] = frame
        return frame
    }

    /// Swift symbols through the runtime's demangler; anything else unchanged.
    static func demangle(_ name: String) -> String {
        guard name.hasPrefix("$s") || name.hasPrefix("$S") || name.hasPrefix("_T") || name.hasPrefix("_$s") else {
            return name
        }
        return name.withCString { mangled in
            guard let demangled = swift_demangle(mangled, strlen(mangled), nil, nil, 0) else { return name }
            defer { free(demangled) }
            return String(cString: demangled)
        }
    }

    private static let systemImages = [
        "libc.so", "libc-", "libpthread", "ld-linux", "libgcc_s", "libstdc++", "libm.so", "linux-vdso",
        "libswiftCore", "libswift_", "libswiftDispatch", "libdispatch", "libBlocksRuntime", "libFoundation",
        "libswiftGlibc", "libswiftSynchronization", "libXCTest", "libTesting",
    ]
    private static let systemSymbols = [
        "$ss", "$sS", "swift_", "_swift", "dispatch_", "_dispatch", "$s8Dispatch", "$s10Foundation",
        "$s7Testing", "__",
        // Perf's own code never is the culprit: not its modules, not its C shims.
        "$s4Perf", "$s8PerfCore", "$s10JournalKit", "perf_",
    ]

    /// Runtime, Dispatch, Foundation and libc frames (also when linked statically).
    static func isSystem(image: String, mangled: String?) -> Bool {
        let name = image.split(separator: "/").last.map(String.init) ?? image
        if systemImages.contains(where: { name.hasPrefix($0) }) { return true }
        guard let mangled else { return false }
        return systemSymbols.contains(where: { mangled.hasPrefix($0) })
    }
}

/// Stuck frames and culprit from the samples of one thread.
enum StackAnalysis {
    /// Frames of the last sample that appear (by function) in every sample, innermost first, and
    /// the innermost of them that is the program's own code: not a system frame, not compiler
    /// glue (thunks, `partial apply` forwarders, outlined copies). A `merged` function is the
    /// program's code: the compiler folded functions with identical bodies into it, and one of
    /// them is what the thread runs. When some samples hold the program's code and others none,
    /// only the former count: a sample that caught the thread outside the program (back in the
    /// dispatch worker loop as the block returned, or a walk cut short) says nothing about where
    /// it was stuck, and would empty the intersection (a release CI run lost the blocking
    /// function that way while its culprit was right).
    ///
    /// When no frame but glue is the program's (the function that blocked was inlined into a
    /// thunk or a `partial apply` of a closure), the culprit is the innermost glue frame of the
    /// program, one that names a function of it before one that names only types: a culprit is
    /// never missing while the program is on the stack, and ``SymbolNames/mark(_:)`` says it is
    /// a thunk.
    static func stuckFrames(_ samples: [[Perf.HangWatchdog.Frame]]) -> (
        stuck: [Perf.HangWatchdog.Frame], culprit: Perf.HangWatchdog.Frame?
    ) {
        let withCode = samples.filter { $0.contains(where: isProgramCode) }
        let withProgram = withCode.isEmpty ? samples.filter { $0.contains(where: isProgram) } : withCode
        let compared = withProgram.isEmpty ? samples : withProgram
        guard let last = compared.last else { return ([], nil) }
        let others = compared.dropLast().map { Set($0.map(key)) }
        let stuck = last.filter { frame in others.allSatisfy { $0.contains(key(frame)) } }
        for isCandidate in [isProgramCode, isProgramGlueNamingAFunction, isProgram] {
            if let culprit = culprit(stuck: stuck, samples: samples, isCandidate) { return (stuck, culprit) }
        }
        return (stuck, nil)
    }

    /// The innermost stuck frame that `isCandidate` accepts. One sample that missed the program's
    /// frames (a thread caught between two calls, a walk cut short) must not cost the culprit:
    /// without a stuck one, the frame most samples agree on, else the innermost one of the latest
    /// sample that has any.
    private static func culprit(
        stuck: [Perf.HangWatchdog.Frame], samples: [[Perf.HangWatchdog.Frame]],
        _ isCandidate: (Perf.HangWatchdog.Frame) -> Bool
    ) -> Perf.HangWatchdog.Frame? {
        if let culprit = stuck.first(where: isCandidate) { return culprit }
        let counts = Dictionary(samples.flatMap { Set($0.map(key)) }.map { ($0, 1) }, uniquingKeysWith: +)
        for sample in samples.reversed() {
            if let agreed = sample.first(where: { isCandidate($0) && (counts[key($0)] ?? 0) * 2 > samples.count }) {
                return agreed
            }
        }
        for sample in samples.reversed() {
            if let latest = sample.first(where: isCandidate) { return latest }
        }
        return nil
    }

    /// A frame a person would call "my code".
    static func isProgramCode(_ frame: Perf.HangWatchdog.Frame) -> Bool {
        isProgram(frame) && !SymbolNames.isGlue(frame.symbol ?? "")
    }

    /// A named frame of the program's images, its own code or the compiler's glue for it.
    static func isProgram(_ frame: Perf.HangWatchdog.Frame) -> Bool {
        !frame.isSystem && frame.symbol != nil
    }

    private static func isProgramGlueNamingAFunction(_ frame: Perf.HangWatchdog.Frame) -> Bool {
        isProgram(frame) && SymbolNames.namesAFunction(frame.symbol ?? "")
    }

    private static func key(_ frame: Perf.HangWatchdog.Frame) -> String {
        frame.symbol.map { "\(frame.image):\($0)" } ?? "\(frame.image):0x\(String(frame.address, radix: 16))"
    }
}

/// Demangled Swift names as a person would write them.
package enum SymbolNames {
    /// Compiler-made code that only forwards to, wraps or copies for the program's code. A
    /// `merged` function is not among them: it is the program's code, shared by functions the
    /// compiler found identical.
    private static let gluePrefixes = [
        "reabstraction thunk", "thunk for ", "partial apply", "outlined ", "protocol witness for ",
        "dispatch thunk of ", "implicit closure", "@objc ", "key path getter", "key path setter",
    ]
    /// The glue whose name goes on with the program's function it wraps (`partial apply for
    /// closure #1 () -> () in App.run() -> ()`), rather than with types only.
    private static let wrapperPrefixes = [
        "partial apply forwarder for ", "partial apply for ", "protocol witness for ", "dispatch thunk of ", "@objc ",
        "implicit closure",
    ]
    private static let specializationPrefixes = [
        "function signature specialization <", "generic specialization <", "specialized ",
        "generic partial specialization <",
    ]
    private static let merged = "merged "

    /// What a culprit's name says beyond the function: shown after it, `App.load() (merged)`.
    package enum Mark: String, Sendable {
        /// Functions with identical bodies were merged into this one: the function named may be
        /// any of them.
        case merged
        /// Compiler glue (a thunk, a `partial apply` of a closure) blamed because no other frame
        /// of the program was on the stack: the function that blocked was inlined into it.
        case thunk
    }

    /// Compiler-made forwarding code: never what a person wrote.
    static func isGlue(_ symbol: String) -> Bool {
        let text = withoutMerged(readable(symbol))
        return gluePrefixes.contains { text.hasPrefix($0) }
    }

    /// Glue that names the program's function it wraps.
    static func namesAFunction(_ symbol: String) -> Bool {
        let text = withoutMerged(readable(symbol))
        return isGlue(symbol) && wrapperPrefixes.contains { text.hasPrefix($0) }
    }

    /// The mark a culprit named `symbol` carries, `nil` for a function of the program's own.
    package static func mark(_ symbol: String) -> Mark? {
        if isGlue(symbol) { return .thunk }
        return readable(symbol).hasPrefix(merged) ? .merged : nil
    }

    /// A culprit as the stderr hang line shows it: the function, without the header its mark
    /// stands for, and the mark. `merged static App.load() -> ()` → (`static App.load() -> ()`,
    /// `.merged`); `partial apply for closure #1 () -> () in App.run() -> ()` → (`closure #1 ()
    /// -> () in App.run() -> ()`, `.thunk`).
    package static func marked(_ symbol: String) -> (name: String, mark: Mark?) {
        guard let mark = mark(symbol) else { return (symbol, nil) }
        var text = Substring(withoutMerged(readable(symbol)))
        while let prefix = wrapperPrefixes.first(where: { $0.hasSuffix(" ") && text.hasPrefix($0) }) {
            text = Substring(withoutMerged(readable(String(text.dropFirst(prefix.count)))))
        }
        return (String(text), mark)
    }

    /// `function signature specialization <Arg[0] = Dead> of static App.parse() -> ()` →
    /// `static App.parse() -> ()`; nested specializations are peeled one by one. A `merged`
    /// header stays, and the specializations after it are peeled too.
    static func readable(_ symbol: String) -> String {
        if symbol.hasPrefix(merged) { return merged + readable(String(symbol.dropFirst(merged.count))) }
        var text = Substring(symbol)
        var changed = true
        while changed {
            changed = false
            for prefix in specializationPrefixes where text.hasPrefix(prefix) {
                if prefix == "specialized " {
                    text = text.dropFirst(prefix.count)
                } else if let end = closingBracket(text, from: text.index(text.startIndex, offsetBy: prefix.count - 1)),
                    text[end...].hasPrefix("> of ")
                {
                    text = text[text.index(end, offsetBy: 5)...]
                } else {
                    continue
                }
                changed = true
            }
        }
        if text.hasPrefix(merged) { return readable(String(text)) }
        return String(text)
    }

    /// `text` without a leading `merged ` header.
    private static func withoutMerged(_ text: String) -> String {
        text.hasPrefix(merged) ? readable(String(text.dropFirst(merged.count))) : text
    }

    /// The `>` that closes the `<` at `open`.
    private static func closingBracket(_ text: Substring, from open: Substring.Index) -> Substring.Index? {
        var depth = 0
        var index = open
        var previous: Character = " "
        while index < text.endIndex {
            switch text[index] {
            case "<": depth += 1
            case ">" where previous != "-":  // `->` in a function type closes nothing
                depth -= 1
                if depth == 0 { return index }
            default: break
            }
            previous = text[index]
            index = text.index(after: index)
        }
        return nil
    }
}
