// Perf's own threads (the hang watchdog, the metrics endpoint): plain pthreads, never a Dispatch
// or cooperative-pool thread the program's work needs, started and stopped one way.
import Glibc

enum OwnThread {
    /// Runs `body` on a new thread, which holds what `body` captures until it returns; `nil` if
    /// `pthread_create` failed.
    static func spawn(_ body: @escaping @Sendable () -> Void) -> pthread_t? {
        final class Start: Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(Start(body)).toOpaque()
        let result = pthread_create(
            &thread, nil,
            { context in
                Unmanaged<Start>.fromOpaque(context!).takeRetainedValue().body()
                return nil
            }, context)
        guard result == 0 else {
            Unmanaged<Start>.fromOpaque(context).release()
            return nil
        }
        return thread
    }

    /// Waits for `thread` to end; called on that very thread (a callback stopping its own
    /// thread), detaches it instead, so it ends on its own once the callback returns.
    static func joinOrDetach(_ thread: pthread_t) {
        if pthread_equal(pthread_self(), thread) != 0 {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }
}
