// Who and where a session ran: the identity written as every journal segment's header.
import Foundation

/// The identity of one process run: written once as the header of its journal, so every
/// segment names the session it belongs to and rotation never orphans an entry.
///
/// It deliberately holds no hostname and no user name: the data directory may be exported to
/// someone who should learn the machine's shape, not who used it.
public struct SessionInfo: Codable, Sendable, Equatable {
    /// The program that ran: the one description of an instrumented program, which
    /// `Perf.AppInfo`, diagnostic payloads and the report model name too.
    public struct App: Codable, Sendable, Equatable {
        /// The program's name, e.g. `"myservice"`; also the last component of Perf's default
        /// data directory.
        public var name: String
        /// Its marketing version, e.g. `"1.4.0"`.
        public var version: String
        /// Its build number or commit, e.g. `"812"`.
        public var build: String

        /// Creates an app description.
        public init(name: String, version: String = "0", build: String = "0") {
            self.name = name
            self.version = version
            self.build = build
        }

        /// The running executable's name, for programs that do not say.
        public static var current: App {
            App(name: URL(fileURLWithPath: CommandLine.arguments.first ?? "app").lastPathComponent)
        }
    }

    /// The machine it ran on, without anything that identifies a person or a host by name, and
    /// the toolchain and configuration the program was built with: the one host description,
    /// which `HostDescription`, diagnostic payloads and the report model name too.
    ///
    /// The journal header records the machine only: a session read back from its journal has an
    /// empty ``swiftVersion`` and ``buildConfiguration``.
    public struct Host: Codable, Sendable, Equatable {
        /// The operating system, e.g. `"Ubuntu 24.04.1 LTS"` (from `/etc/os-release`).
        public var os: String
        /// The kernel release, e.g. `"6.8.0-45-generic"` (from `uname`).
        public var kernel: String
        /// The machine architecture, e.g. `"x86_64"` (from `uname`).
        public var arch: String
        /// The CPU model name (from `/proc/cpuinfo`), empty when unknown.
        public var cpuModel: String
        /// Online processor count.
        public var cores: Int
        /// Physical memory in bytes.
        public var memoryBytes: UInt64
        /// The Swift compiler version the program was built with, e.g. `"6.3"`.
        public var swiftVersion: String
        /// `debug` or `release`.
        public var buildConfiguration: String

        /// Creates a host description; ``current()`` reads the running machine's.
        public init(
            os: String, kernel: String, arch: String, cpuModel: String, cores: Int, memoryBytes: UInt64,
            swiftVersion: String = "", buildConfiguration: String = ""
        ) {
            self.os = os
            self.kernel = kernel
            self.arch = arch
            self.cpuModel = cpuModel
            self.cores = cores
            self.memoryBytes = memoryBytes
            self.swiftVersion = swiftVersion
            self.buildConfiguration = buildConfiguration
        }

        /// The machine this process runs on, read from `uname`, `/etc/os-release` and `/proc`, and
        /// this build's compiler and configuration.
        ///
        /// Fields that cannot be read are left empty rather than failing: a session must start
        /// even in a container with a stripped `/proc`.
        public static func current() -> Host { HostProbe.read() }
    }

    /// A random identifier of 16 lowercase hex characters, also the session's directory name.
    public var id: String
    /// The process id of the run.
    public var pid: Int32
    /// When the session started, in nanoseconds since the Unix epoch.
    public var startWallNanos: UInt64
    /// The program that ran.
    public var app: App
    /// The machine it ran on.
    public var host: Host

    /// Creates a session description.
    ///
    /// - Parameters:
    ///   - id: The session id; by default 16 random hex characters. Must be non-empty and made of
    ///     `[0-9A-Za-z_-]` only, because it names a directory.
    ///   - pid: The process id; by default this process's.
    ///   - startWallNanos: Start time since the Unix epoch; by default now.
    ///   - app: The program that runs.
    ///   - host: The machine; by default ``Host/current()``.
    public init(
        id: String = SessionInfo.randomID(),
        pid: Int32 = getpid(),
        startWallNanos: UInt64 = SystemClock().wallNanos(),
        app: App,
        host: Host = .current()
    ) {
        self.id = id
        self.pid = pid
        self.startWallNanos = startWallNanos
        self.app = app
        self.host = host
    }

    /// 16 lowercase hex characters from the system's random generator.
    public static func randomID() -> String {
        let value = UInt64.random(in: .min ... .max)
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Whether `id` can safely name a directory: non-empty, at most 64 characters of
    /// `[0-9A-Za-z_-]`, so it can never climb out of `sessions/`.
    static func isValidID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64
            && id.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2D || byte == 0x5F
            }
    }
}
