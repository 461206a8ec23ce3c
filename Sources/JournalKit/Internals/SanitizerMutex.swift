#if PERF_SANITIZER_LOCKS
    import Glibc

    // ThreadSanitizer builds only (scripts/validate-sanitizers.sh passes -DPERF_SANITIZER_LOCKS to the
    // TSan build). Synchronization.Mutex on Linux hands a contended lock over inside the kernel
    // (FUTEX_LOCK_PI), where TSan sees no acquire, so it reports every contended access to a
    // Mutex-protected value as a race (scripts/sanitizers/mutex-race-repro.swift shows it in a dozen
    // lines). This stand-in has Mutex's API over a pthread mutex, which TSan intercepts, and each
    // module that locks aliases `Mutex` to it in that build (its SanitizerLocks.swift): the TSan run
    // then checks Perf's own synchronisation instead of suppressing every report under a lock.

    /// Where a ``SanitizerMutex`` keeps its pthread mutex and value: a class, so both stay at one
    /// address however the noncopyable handle moves.
    package final class SanitizerLockStorage<Value: ~Copyable>: @unchecked Sendable {
        fileprivate let lock: UnsafeMutablePointer<pthread_mutex_t>
        fileprivate var value: Value

        fileprivate init(_ value: consuming Value) {
            lock = .allocate(capacity: 1)
            lock.initialize(to: pthread_mutex_t())
            pthread_mutex_init(lock, nil)
            self.value = value
        }

        deinit {
            pthread_mutex_destroy(lock)
            lock.deinitialize(count: 1)
            lock.deallocate()
        }
    }

    /// Synchronization.Mutex's API (`init`, `withLock`, `withLockIfAvailable`) over a pthread mutex.
    package struct SanitizerMutex<Value: ~Copyable>: ~Copyable, @unchecked Sendable {
        private let storage: SanitizerLockStorage<Value>

        package init(_ initialValue: consuming sending Value) {
            storage = SanitizerLockStorage(initialValue)
        }

        package borrowing func withLock<Result: ~Copyable, E: Error>(
            _ body: (inout sending Value) throws(E) -> sending Result
        ) throws(E) -> sending Result {
            pthread_mutex_lock(storage.lock)
            defer { pthread_mutex_unlock(storage.lock) }
            return try body(&storage.value)
        }

        package borrowing func withLockIfAvailable<Result: ~Copyable, E: Error>(
            _ body: (inout sending Value) throws(E) -> sending Result
        ) throws(E) -> sending Result? {
            guard pthread_mutex_trylock(storage.lock) == 0 else { return nil }
            defer { pthread_mutex_unlock(storage.lock) }
            return try body(&storage.value)
        }
    }
#endif
