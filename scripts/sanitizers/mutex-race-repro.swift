// ThreadSanitizer's false positive on Synchronization.Mutex (Swift 6.3.1, Linux): every access
// below is under the lock, yet `swiftc -sanitize=thread mutex-race-repro.swift && ./a.out` reports
// "Swift access race" once threads contend. scripts/validate-sanitizers.sh builds and runs it each
// time, so the TSan build drops its pthread Mutex (-DPERF_SANITIZER_LOCKS) once a toolchain stops reporting it.
import Dispatch
import Synchronization

let state = Mutex<[Int]>([])
DispatchQueue.concurrentPerform(iterations: 4) { _ in
    for value in 0..<20_000 {
        state.withLock { items in
            items.append(value)
            if items.count > 64 { items.removeFirst(32) }
        }
    }
}
print(state.withLock { $0.count })
