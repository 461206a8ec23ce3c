// Reads the host description from uname and /proc (the only file I/O SessionInfo does), and
// names the compiler and configuration of this build.
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Probes the running machine for ``SessionInfo/Host``.
enum HostProbe {
    static func read() -> SessionInfo.Host {
        let names = unameFields()
        return SessionInfo.Host(
            os: osName(),
            kernel: names.release,
            arch: names.machine,
            cpuModel: cpuModel(),
            cores: ProcessInfo.processInfo.activeProcessorCount,
            memoryBytes: ProcessInfo.processInfo.physicalMemory,
            swiftVersion: compilerVersion,
            buildConfiguration: buildConfiguration)
    }

    /// The compiler this build was made with, to its minor version.
    static var compilerVersion: String {
        #if compiler(>=6.4)
            return "6.4 or newer"
        #elseif compiler(>=6.3)
            return "6.3"
        #elseif compiler(>=6.2)
            return "6.2"
        #elseif compiler(>=6.1)
            return "6.1"
        #else
            return "6.0"
        #endif
    }

    /// `debug` or `release`: every module of the package is built in the same configuration.
    static var buildConfiguration: String {
        #if DEBUG
            return "debug"
        #else
            return "release"
        #endif
    }

    /// `PRETTY_NAME` from os-release, falling back to uname's system name.
    private static func osName() -> String {
        for path in ["/etc/os-release", "/usr/lib/os-release"] {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
            if let value = value(of: "PRETTY_NAME", separator: "=", in: text) {
                return value.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
        }
        return unameFields().sysname
    }

    private static func cpuModel() -> String {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return "" }
        // x86 says "model name"; many ARM kernels only say "Hardware" or "CPU part".
        return value(of: "model name", separator: ":", in: text) ?? value(of: "Hardware", separator: ":", in: text)
            ?? ""
    }

    /// The first `key<separator>value` line's trimmed value.
    static func value(of key: String, separator: Character, in text: String) -> String? {
        for line in text.split(separator: "\n") {
            guard let index = line.firstIndex(of: separator) else { continue }
            if line[..<index].trimmingCharacters(in: .whitespaces) == key {
                return line[line.index(after: index)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    private static func unameFields() -> (sysname: String, release: String, machine: String) {
        var info = utsname()
        guard uname(&info) == 0 else { return ("", "", "") }
        func field<T>(_ tuple: inout T) -> String {
            withUnsafeBytes(of: &tuple) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
        }
        return (field(&info.sysname), field(&info.release), field(&info.machine))
    }
}
