// Samples another thread's stack through the CPerfShims SIGPROF handler and turns the raw
// addresses into demangled frames, on the watchdog thread (never inside the signal handler).
import CPerfShims
import Glibc

/// One successful stack sample of one thread.
struct ThreadSample: Sendable {
    var tid: Int32
    /// Innermost first; the first address is the interrupted instruction.
    var addresses: [UInt]
    /// The stack was deeper than the sampler keeps.
    var truncated: Bool
    /// Name, state and wait channel read just before the signal was sent.
    var thread: Perf.HangWatchdog.ThreadInfo
}

/// Why a sample could not be taken.
enum SampleFailure: Error, Equatable {
    case unavailable(String)
    case failed(String)
}

enum StackSampler {
    /// How long to wait for the target thread's handler before giving up on it.
    static let timeoutNanos: UInt64 = 20_000_000

    /// Installs the process-wide handler on first use; `nil` when sampling works, else why not.
    static let unavailableReason: String? = {
        switch perf_stack_sampler_install() {
        case 0: return nil
        case 1: return "SIGPROF in use by another handler (a profiler?)"
        default: return "cannot install the SIGPROF handler"
        }
    }()

    /// Samples thread `tid` of this process.
    static func sample(tid: Int32) -> Result<ThreadSample, SampleFailure> {
        if let reason = unavailableReason { return .failure(.unavailable(reason)) }
        let thread = ProcProbe.thread(tid)
        var buffer = [UInt](repeating: 0, count: Int(PERF_STACK_MAX_FRAMES))
        let count = buffer.withUnsafeMutableBufferPointer {
            perf_stack_sample_thread(tid, $0.baseAddress, Int32($0.count), timeoutNanos)
        }
        switch count {
        case ..<(-3): return .failure(.failed("thread \(tid) did not answer SIGPROF within 20 ms"))
        case -3: return .failure(.failed("thread \(tid) exited"))
        case -2: return .failure(.failed("every sample slot was busy"))
        case ..<0: return .failure(.unavailable("the SIGPROF sampler is not installed"))
        default:
            return .success(
                ThreadSample(
                    tid: tid, addresses: Array(buffer[0..<Int(count)]),
                    truncated: count == PERF_STACK_MAX_FRAMES, thread: thread))
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
    /// the innermost of them that is not a system frame.
    static func stuckFrames(_ samples: [[Perf.HangWatchdog.Frame]]) -> (
        stuck: [Perf.HangWatchdog.Frame], culprit: Perf.HangWatchdog.Frame?
    ) {
        guard let last = samples.last else { return ([], nil) }
        let others = samples.dropLast().map { Set($0.map(key)) }
        let stuck = last.filter { frame in others.allSatisfy { $0.contains(key(frame)) } }
        return (stuck, stuck.first { !$0.isSystem && $0.symbol != nil })
    }

    private static func key(_ frame: Perf.HangWatchdog.Frame) -> String {
        frame.symbol.map { "\(frame.image):\($0)" } ?? "\(frame.image):0x\(String(frame.address, radix: 16))"
    }
}
