// Waiting for a condition instead of sleeping for a guessed time.
import Dispatch
import Glibc

/// Polls `condition` every 5 ms until it holds or `seconds` pass; false on timeout.
public func waitUntil(seconds: Double, _ condition: () -> Bool) async throws -> Bool {
    let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
    while !condition() {
        if DispatchTime.now().uptimeNanoseconds > deadline { return false }
        try await Task.sleep(nanoseconds: 5_000_000)
    }
    return true
}

/// `waitUntil` for synchronous code (a thread that may block): polls every 5 ms.
public func pollUntil(seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
    while !condition() {
        if DispatchTime.now().uptimeNanoseconds > deadline { return false }
        usleep(5_000)
    }
    return true
}
