// The machine and toolchain a benchmark or reliability run was made on, as the Markdown and JSON
// those tools write state it, so a figure can always be traced to how it was made.
import Foundation

/// Where and how a run of perf-bench or perf-reliability was made: the command, the date, and
/// the machine and toolchain from the same host probe diagnostics and reports use.
package struct RunEnvironment: Codable, Sendable, Equatable {
    /// When the run started, ISO-8601.
    package var date: String
    /// The command that made it, as the reader would type it.
    package var command: String
    /// The CPU model name, `unknown` when the host does not say.
    package var cpuModel: String
    /// Online CPU cores.
    package var cores: Int
    /// Physical memory in GiB, to one decimal.
    package var memoryGiB: Double
    /// Kernel release.
    package var kernel: String
    /// The Swift compiler the tool was built with.
    package var swiftVersion: String
    /// `debug` or `release`.
    package var buildConfiguration: String

    /// Creates a description.
    package init(
        date: String, command: String, cpuModel: String, cores: Int, memoryGiB: Double, kernel: String,
        swiftVersion: String, buildConfiguration: String
    ) {
        self.date = date
        self.command = command
        self.cpuModel = cpuModel
        self.cores = cores
        self.memoryGiB = memoryGiB
        self.kernel = kernel
        self.swiftVersion = swiftVersion
        self.buildConfiguration = buildConfiguration
    }

    /// This machine and build, now, for a run made by `command`.
    package static func current(command: String) -> RunEnvironment {
        let host = HostDescription.current()
        return RunEnvironment(
            date: ISO8601DateFormatter().string(from: Date()), command: command,
            cpuModel: host.cpuModel.isEmpty ? "unknown" : host.cpuModel, cores: host.cores,
            memoryGiB: (Double(host.memoryBytes) / 1_073_741_824 * 10).rounded() / 10, kernel: host.kernel,
            swiftVersion: host.swiftVersion, buildConfiguration: host.buildConfiguration)
    }
}
