// How hang lines name things: culprits as a person writes them, compiler glue skipped, waits in
// words. Pure functions: no threads, no clocks.
import Testing

@testable import Perf

@Suite struct WatchdogNamingTests {
    @Test(arguments: [
        (
            "function signature specialization <Arg[0] = Dead> of static PerfReportCLI.DemoWorkload.parseHugeFeed() -> ()",
            "static PerfReportCLI.DemoWorkload.parseHugeFeed() -> ()"
        ),
        (
            "generic specialization <Swift.Int> of function signature specialization <Arg[0] = Owned To Guaranteed> of App.Store.save<A>(A) -> ()",
            "App.Store.save<A>(A) -> ()"
        ),
        ("generic specialization <(Swift.Int) -> ()> of App.run(_: (A) -> ()) -> ()", "App.run(_: (A) -> ()) -> ()"),
        ("specialized App.load() -> Swift.Int", "App.load() -> Swift.Int"),
        (
            "App.Parser.parse(Foundation.Data) throws -> App.Feed",
            "App.Parser.parse(Foundation.Data) throws -> App.Feed"
        ),
        ("generic specialization <unbalanced of App.f()", "generic specialization <unbalanced of App.f()"),
    ])
    func specializationPrefixesArePeeled(raw: String, readable: String) {
        #expect(SymbolNames.readable(raw) == readable)
    }

    @Test func compilerGlueIsNeverACulprit() {
        let glue = [
            "reabstraction thunk helper from @escaping @callee_guaranteed () -> () to @escaping @callee_unowned @convention(block) () -> ()",
            "partial apply forwarder for closure #1 () -> () in App.run() -> ()",
            "thunk for @escaping @callee_guaranteed () -> ()",
            "merged reabstraction thunk helper from () -> () to () -> ()", "outlined copy of App.State",
            "protocol witness for App.P.f() -> () in conformance App.S : App.P in App",
            "function signature specialization <Arg[0] = Dead> of reabstraction thunk helper from () -> () to () -> ()",
        ]
        for symbol in glue { #expect(SymbolNames.isGlue(symbol), "\(symbol)") }
        #expect(
            !SymbolNames.isGlue("closure #1 () -> () in App.Service.handle() -> ()"), "a closure is the program's code")
        #expect(!SymbolNames.isGlue("App.Service.handle() -> ()"))
        #expect(!SymbolNames.isGlue("merged App.a() -> ()"), "a merged function is the program's code")
        #expect(!SymbolNames.isGlue("merged function signature specialization <Arg[0] = Dead> of App.a() -> ()"))
    }

    @Test(
        arguments: [
            ("App.load() -> ()", "App.load() -> ()", nil),
            ("merged static App.load() -> ()", "static App.load() -> ()", .merged),
            (
                "merged function signature specialization <Arg[1] = Dead> of App.load(ms: Swift.Int) -> ()",
                "App.load(ms: Swift.Int) -> ()", .merged
            ),
            (
                "partial apply for closure #1 () -> () in App.run() -> ()", "closure #1 () -> () in App.run() -> ()",
                .thunk
            ),
            (
                "protocol witness for App.P.f() -> () in conformance App.S : App.P in App",
                "App.P.f() -> () in conformance App.S : App.P in App", .thunk
            ),
            (
                "merged reabstraction thunk helper from () -> () to () -> ()",
                "reabstraction thunk helper from () -> () to () -> ()", .thunk
            ),
            (
                "implicit closure #1 () -> Swift.Bool in App.f() -> ()",
                "implicit closure #1 () -> Swift.Bool in App.f() -> ()", .thunk
            ),
        ] as [(String, String, SymbolNames.Mark?)])
    func aCulpritThatIsMergedOrAThunkSaysSo(symbol: String, name: String, mark: SymbolNames.Mark?) {
        #expect(SymbolNames.marked(symbol) == (name, mark))
    }

    @Test func perfsOwnFramesAreSystemFrames() {
        #expect(Symbolicator.isSystem(image: "/srv/app", mangled: "$s4Perf0A0O5begin_6slowMsAB4SpanVSS_SdSgtFZ"))
        #expect(Symbolicator.isSystem(image: "/srv/app", mangled: "$s8PerfCore12SpanRecorderC3endyyF"))
        #expect(Symbolicator.isSystem(image: "/srv/app", mangled: "perf_sigprof_handler"))
        #expect(
            !Symbolicator.isSystem(image: "/srv/app", mangled: "$s9PerfTests4mainyyF"),
            "a module named Perf… is not Perf")
        #expect(!Symbolicator.isSystem(image: "/srv/app", mangled: "$s3App7ServiceC6handleyyF"))
    }

    @Test func waitTargetsReadAsWordsNotSchemes() {
        #expect(WaitDescription.readableTarget("socket:[99]") == "socket 99")
        #expect(WaitDescription.readableTarget("pipe:[1234]") == "pipe 1234")
        #expect(WaitDescription.readableTarget("anon_inode:[eventpoll]") == "eventpoll")
        #expect(WaitDescription.readableTarget("anon_inode:inotify") == "inotify")
        #expect(WaitDescription.readableTarget("/var/lib/app/db:main.sqlite") == "/var/lib/app/db:main.sqlite")
        #expect(WaitDescription.durationText(nanos: 600_000_000) == "600 ms")
        #expect(WaitDescription.durationText(nanos: 2_500_000_000) == "2.5 s")
        #expect(WaitDescription.durationText(nanos: 250_000) == "250 µs")
    }

    @Test func futexWaitsAreNamedByTheLibraryCallThatMadeThem() {
        func frames(_ symbols: [String?]) -> [Perf.HangWatchdog.Frame] {
            symbols.map {
                Perf.HangWatchdog.Frame(address: 1, symbol: $0, offset: 0, image: "libc.so.6", isSystem: true)
            }
        }
        #expect(
            WaitDescription.futexPurpose(frames([nil, "__pthread_mutex_lock", "App.save() -> ()"])) == "pthread mutex")
        #expect(WaitDescription.futexPurpose(frames([nil, "pthread_cond_timedwait"])) == "condition variable")
        #expect(WaitDescription.futexPurpose(frames([nil, nil, "_dispatch_sema4_timedwait"])) == "DispatchSemaphore")
        #expect(WaitDescription.futexPurpose(frames([nil, "sem_timedwait"])) == "POSIX semaphore")
        #expect(WaitDescription.futexPurpose(frames([nil, "App.wait() -> ()"])) == "futex word")
    }

    @Test func syscallNamesCoverTheBlockingCalls() {
        #if arch(x86_64)
            #expect(SyscallNames.name(230) == "clock_nanosleep")
            #expect(SyscallNames.name(202) == "futex")
            #expect(SyscallNames.name(7) == "poll")
        #endif
        #expect(SyscallNames.name(99_999) == "syscall 99999")
    }

    @Test func aWaitIsPrivacyFilteredBeforeItIsWrittenAnywhere() {
        let wait = Perf.HangWatchdog.Wait(
            call: "read", on: "fd 7 → /var/cache/app/https:/api.example.com/v1/items?token=s3cr3t-abcdef0123456789",
            owner: nil, ownerCulprit: nil)
        let episode = Perf.HangWatchdog.Episode(
            id: 1, targetName: "db", kind: .hang, lowerMs: 300, upperMs: 350, durationMs: 325, stallMs: 0,
            suppressed: nil, fatal: false, inProgress: false, thread: nil, wait: wait, stack: [], stuckFrames: [],
            culprit: nil, stackQuality: .full, samplesTaken: 1, isFullRecord: true, startedWallNanos: 0)
        let written = [
            HangRecording.record(for: episode).wait, HangRecording.marker(for: episode, id: 1).payload["wait"],
        ]
        for text in written {
            #expect(text?.hasPrefix("read(fd 7") == true, "\(text ?? "nil")")
            #expect(text?.contains("s3cr3t") == false, "\(text ?? "nil")")
            #expect(text?.contains("token") == false, "\(text ?? "nil")")
        }
    }
}
