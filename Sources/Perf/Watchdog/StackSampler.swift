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
        let thread = ProcProbe.thread(tid)
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
        let deadline = perf_monotonic_ns() + (allowSignal ? Self.runningWindowNanos : 300_000)
        let minimumAttempts = allowSignal ? 10 : 3
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
            usleep(100)
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
    /// glue (thunks, `partial apply` forwarders, outlined copies). When some samples hold the
    /// program's code and others none, only the former count: a sample that caught the thread
    /// outside the program (back in the dispatch worker loop as the block returned, or a walk cut
    /// short) says nothing about where it was stuck, and would empty the intersection (a release
    /// CI run lost the blocking function that way while its culprit was right).
    static func stuckFrames(_ samples: [[Perf.HangWatchdog.Frame]]) -> (
        stuck: [Perf.HangWatchdog.Frame], culprit: Perf.HangWatchdog.Frame?
    ) {
        let withProgram = samples.filter { $0.contains(where: isProgramCode) }
        let compared = withProgram.isEmpty ? samples : withProgram
        guard let last = compared.last else { return ([], nil) }
        let others = compared.dropLast().map { Set($0.map(key)) }
        let stuck = last.filter { frame in others.allSatisfy { $0.contains(key(frame)) } }
        if let culprit = stuck.first(where: isProgramCode) { return (stuck, culprit) }
        // One sample that missed the program's frames (a thread caught between two calls, a walk
        // cut short) must not cost the culprit: take the program frame most samples agree on,
        // else the innermost one of the latest sample that has any.
        let counts = Dictionary(samples.flatMap { Set($0.map(key)) }.map { ($0, 1) }, uniquingKeysWith: +)
        let agreed = samples.reversed().lazy.compactMap { sample in
            sample.first { isProgramCode($0) && (counts[key($0)] ?? 0) * 2 > samples.count }
        }.first
        return (stuck, agreed ?? samples.reversed().lazy.compactMap { $0.first(where: isProgramCode) }.first)
    }

    /// A frame a person would call "my code".
    static func isProgramCode(_ frame: Perf.HangWatchdog.Frame) -> Bool {
        guard !frame.isSystem, let symbol = frame.symbol else { return false }
        return !SymbolNames.isGlue(symbol)
    }

    private static func key(_ frame: Perf.HangWatchdog.Frame) -> String {
        frame.symbol.map { "\(frame.image):\($0)" } ?? "\(frame.image):0x\(String(frame.address, radix: 16))"
    }
}

/// Demangled Swift names as a person would write them.
enum SymbolNames {
    private static let gluePrefixes = [
        "reabstraction thunk", "thunk for ", "partial apply", "merged ", "outlined ", "protocol witness for ",
        "dispatch thunk of ", "implicit closure", "@objc ", "key path getter", "key path setter",
    ]
    private static let specializationPrefixes = [
        "function signature specialization <", "generic specialization <", "specialized ",
        "generic partial specialization <",
    ]

    /// Compiler-made forwarding code: never what a person wrote.
    static func isGlue(_ symbol: String) -> Bool {
        let readable = readable(symbol)
        return gluePrefixes.contains { readable.hasPrefix($0) }
    }

    /// `function signature specialization <Arg[0] = Dead> of static App.parse() -> ()` →
    /// `static App.parse() -> ()`; nested specializations are peeled one by one.
    static func readable(_ symbol: String) -> String {
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
        return String(text)
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
