// A real short write: an LD_PRELOAD shim, compiled here with `cc`, makes one write(2) to
// perf-events.jsonl store 10 bytes and return 10, as a filling disk can.
import Foundation
import Glibc
import PerfTestSupport

extension ReliabilityFaultInjection {
    /// The shim: the `PERF_SHORT_WRITE_AT`-th write of more than 10 bytes to a file named
    /// `perf-events.jsonl` writes its first 10 bytes only and returns 10.
    static let shortWriteShim = #"""
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>
        #include <unistd.h>

        static int seen;

        ssize_t write(int fd, const void *buffer, size_t count) {
            static ssize_t (*real)(int, const void *, size_t);
            if (!real) real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
            if (fd > 2 && count > 10) {
                char link[64], target[4096];
                snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
                ssize_t length = readlink(link, target, sizeof target - 1);
                const char *suffix = "/perf-events.jsonl";
                size_t suffixLength = strlen(suffix);
                if (length >= (ssize_t)suffixLength) {
                    target[length] = 0;
                    const char *at = getenv("PERF_SHORT_WRITE_AT");
                    if (strcmp(target + length - suffixLength, suffix) == 0 && at
                        && __atomic_add_fetch(&seen, 1, __ATOMIC_RELAXED) == atoi(at)) {
                        ssize_t written = real(fd, buffer, 10);
                        return written < 0 ? written : 10;
                    }
                }
            }
            return real(fd, buffer, count);
        }
        """#

    static func shortWrite() throws -> ScenarioResult {
        let name = "Fault: short write of a ledger line (LD_PRELOAD)"
        let target =
            "the line lost reported as `dropped` 1; its 10-byte fragment ends in a newline and reads as "
            + "one malformed line, never glued to the next; every other line valid; one stderr message; normal exit"
        let build = try ScratchDirectory("short-write")
        defer { build.remove() }
        let source = build.url.appendingPathComponent("short-write.c").path
        let library = build.url.appendingPathComponent("short-write.so").path
        try shortWriteShim.write(toFile: source, atomically: true, encoding: .utf8)
        guard ChildProcess.runTool(["cc", "-shared", "-fPIC", "-O1", "-o", library, source, "-ldl"]) else {
            return .skipped(
                scenario: name, target: target,
                why: "cannot compile the shim with cc (\(ChildProcess.lastToolOutput.prefix(200)))")
        }
        let lines = 200
        var environment = ProcessInfo.processInfo.environment
        environment["LD_PRELOAD"] = library
        environment["PERF_SHORT_WRITE_AT"] = "101"
        let run = try run(
            lines: lines, cap: 1 << 20, wrapper: { _, child in (child[0], Array(child.dropFirst())) },
            environment: environment)
        let missing = run.missing(lines)
        let pass =
            run.exitedCleanly && run.dropped == [1] && missing.count == 1 && run.malformed == 1 && run.invalid == 1
            && run.messages.count == 1 && run.sessionStatus == "terminated"
        return ScenarioResult(
            scenario: name,
            done: "\(lines) ends; the 101st write to perf-events.jsonl stores 10 bytes and returns 10 (shim built "
                + "with `cc -shared -fPIC`, loaded with LD_PRELOAD)",
            target: target, result: run.summary + "; \(missing.count) end missing", pass: pass,
            notes: run.messages.first ?? "", counts: counts(run, missing: missing.count))
    }
}
