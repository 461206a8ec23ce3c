// In the ThreadSanitizer build, this module's `Mutex` is JournalKit's pthread-backed stand-in
// (see SanitizerMutex.swift there for why); in every other build it is Synchronization.Mutex.
#if PERF_SANITIZER_LOCKS
    import JournalKit
    typealias Mutex<Value: ~Copyable> = SanitizerMutex<Value>
#endif
