// Perf's USDT probe sites (CPerfProbes.h, provider `perf`) as Swift calls, each behind its
// semaphore: with no tracer attached a site is one load and a branch not taken.
import CPerfShims

/// The probe sites. `spanEnd` is inlined into ``SpanRecorder/end(_:exit:reason:detail:count:)``,
/// so its `nop` and note sit in the caller of `end()`, in the program's own executable.
///
/// Arguments never carry content: a span's static name (never a key, detail or reason), numbers,
/// a watched target's name and a hang's culprit symbol.
@usableFromInline
package enum Probes {
    /// `span_end`: name, duration ns, budget ns (0 when none), exit code (as the flight recorder's:
    /// 0 success, 1 failure, 2 cancelled, 3 superseded, 4 expired), over budget (1 when the span
    /// ran past a budget it had, else 0).
    @inlinable @inline(__always)
    package static func spanEnd(_ name: StaticString, durationNanos: UInt64, budgetNanos: UInt64?, exit: SpanExit) {
        guard perf_probe_span_end_enabled() != 0 else { return }
        let budget = budgetNanos ?? 0
        let code = UInt64(FlightRecorder.code(exit))
        let over: UInt64 = budgetNanos.map { durationNanos > $0 ? 1 : 0 } ?? 0
        guard name.hasPointerRepresentation else {
            // A single-scalar name has no storage: spelled into a NUL-terminated stack copy.
            withScalarName(name) { perf_probe_span_end($0, durationNanos, budget, code, over) }
            return
        }
        // A StaticString with pointer representation is a literal's storage, NUL-terminated and
        // valid for the process lifetime.
        name.utf8Start.withMemoryRebound(to: CChar.self, capacity: name.utf8CodeUnitCount + 1) {
            perf_probe_span_end($0, durationNanos, budget, code, over)
        }
    }

    /// `span_begin` of a registered (keyed, bounded or indefinite) span: name, budget ns (0 when
    /// none). Never the key.
    package static func spanBegin(_ name: StaticString, budgetNanos: UInt64?) {
        guard perf_probe_span_begin_enabled() != 0 else { return }
        withCName(name) { perf_probe_span_begin($0, budgetNanos ?? 0) }
    }

    /// `note`: the note's static name (never its detail).
    package static func note(_ name: StaticString) {
        guard perf_probe_note_enabled() != 0 else { return }
        withCName(name) { perf_probe_note($0) }
    }

    /// `hang` or `hitch`: the watched target's name, the episode's bounds in ms, its culprit
    /// symbol ("" when unknown).
    package static func hang(hitch: Bool, target: String, lowerMs: Double, upperMs: Double, culprit: String?) {
        let enabled = hitch ? perf_probe_hitch_enabled() : perf_probe_hang_enabled()
        guard enabled != 0 else { return }
        let lower = milliseconds(lowerMs)
        let upper = milliseconds(upperMs)
        target.withCString { target in
            (culprit ?? "").withCString { culprit in
                if hitch {
                    perf_probe_hitch(target, lower, upper, culprit)
                } else {
                    perf_probe_hang(target, lower, upper, culprit)
                }
            }
        }
    }

    /// `session_start` and `session_end`: the process id.
    package static func session(start: Bool, pid: Int32) {
        if start {
            if perf_probe_session_start_enabled() != 0 { perf_probe_session_start(UInt64(UInt32(bitPattern: pid))) }
        } else {
            if perf_probe_session_end_enabled() != 0 { perf_probe_session_end(UInt64(UInt32(bitPattern: pid))) }
        }
    }

    static func milliseconds(_ ms: Double) -> UInt64 { ms > 0 ? UInt64(min(ms, 1e15).rounded()) : 0 }

    static func withCName(_ name: StaticString, _ body: (UnsafePointer<CChar>) -> Void) {
        guard name.hasPointerRepresentation else { return withScalarName(name, body) }
        name.utf8Start.withMemoryRebound(to: CChar.self, capacity: name.utf8CodeUnitCount + 1, body)
    }

    /// A single-scalar name as a NUL-terminated copy on the stack (at most 4 UTF-8 bytes).
    @usableFromInline @inline(never)
    static func withScalarName(_ name: StaticString, _ body: (UnsafePointer<CChar>) -> Void) {
        var bytes: (UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { buffer in
            var index = 0
            for byte in String(name.unicodeScalar).utf8.prefix(4) {
                buffer[index] = byte
                index += 1
            }
            body(buffer.baseAddress!.assumingMemoryBound(to: CChar.self))
        }
    }
}
