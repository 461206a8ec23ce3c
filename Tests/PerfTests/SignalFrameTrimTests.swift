// The SIGPROF handler keeps a sample's frames from the interrupted instruction on. When the unwind
// never reaches that instruction (ThreadSanitizer delivers the signal late, on its own frames),
// only the instruction is kept: kept, the handler's frames would make Perf blame itself
// (`perf_sigprof_handler` as culprit).
import CPerfShims
import Testing

@Suite struct SignalFrameTrimTests {
    static func trim(_ addresses: [UInt], pc: UInt) -> [UInt] {
        var frames: [UnsafeMutableRawPointer?] = addresses.map { UnsafeMutableRawPointer(bitPattern: $0) }
        let count = frames.withUnsafeMutableBufferPointer {
            perf_trim_signal_frames($0.baseAddress, Int32($0.count), pc)
        }
        return frames.prefix(Int(count)).map { UInt(bitPattern: $0) }
    }

    @Test func framesStartAtTheInterruptedInstruction() {
        // handler, trampoline, interrupted pc, callers
        #expect(Self.trim([0x10, 0x20, 0x500, 0x600, 0x700], pc: 0x500) == [0x500, 0x600, 0x700])
        #expect(Self.trim([0x500, 0x600], pc: 0x500) == [0x500, 0x600])
    }

    @Test func anUnwindThatMissedTheInstructionKeepsOnlyTheInstruction() {
        #expect(Self.trim([0x10, 0x20, 0x30, 0x40], pc: 0x999) == [0x999])
    }

    @Test func withoutARegisterContextTheHandlerFrameIsDropped() {
        #expect(Self.trim([0x10, 0x20, 0x30], pc: 0) == [0x20, 0x30])
        #expect(Self.trim([], pc: 0x500) == [])
    }
}
