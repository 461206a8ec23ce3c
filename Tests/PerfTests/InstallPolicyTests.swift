// The consent gate and data-directory resolution, as pure functions of configuration and environment.
import Foundation
import Testing

@testable import Perf

@Suite struct InstallPolicyTests {
    @Test(arguments: [
        (Perf.Recording.enabled, [String: String](), false, true),
        (.enabled, ["PERF_RECORDING": "0"], true, false),
        (.disabled, ["PERF_RECORDING": "1"], true, false),
        (.auto, [:], true, true),
        (.auto, [:], false, false),
        (.auto, ["PERF_RECORDING": "1"], false, true),
        (.auto, ["PERF_RECORDING": "0"], true, false),
        (.auto, ["PERF_RECORDING": "yes"], false, true),
        (.auto, ["PERF_RECORDING": "maybe"], false, false),
        (.auto, ["PERF_RECORDING": "maybe"], true, true),
        (.enabled, ["PERF_RECORDING": "maybe"], false, true),
        (.auto, ["PERF_RECORDING": ""], false, false),
    ])
    func consentGate(recording: Perf.Recording, environment: [String: String], debug: Bool, expected: Bool) {
        #expect(InstallPolicy.shouldRecord(recording, environment: environment, debugBuild: debug) == expected)
    }

    /// Every usual spelling, in any case and with blanks around it, means the same as `1` or `0`.
    @Test(arguments: ["1", "true", "yes", "on", "TRUE", "Yes", " on ", "\tOn\n"])
    func onSpellingsTurnAutoOnInARelease(value: String) {
        let decision = InstallPolicy.recordingDecision(.auto, environment: ["PERF_RECORDING": value], debugBuild: false)
        #expect(decision == InstallPolicy.RecordingDecision(record: true, warning: nil))
        #expect(!InstallPolicy.shouldRecord(.disabled, environment: ["PERF_RECORDING": value], debugBuild: true))
    }

    @Test(arguments: ["0", "false", "no", "off", "FALSE", "No", " off ", "OFF\n"])
    func offSpellingsAlwaysWin(value: String) {
        for recording in [Perf.Recording.enabled, .disabled, .auto] {
            let decision = InstallPolicy.recordingDecision(
                recording, environment: ["PERF_RECORDING": value], debugBuild: true)
            #expect(decision == InstallPolicy.RecordingDecision(record: false, warning: nil))
        }
    }

    /// Every build, choice and environment: what is recorded, and whether install says that
    /// `.auto` left recording off. Only `.auto` in a release build with `PERF_RECORDING` unset or
    /// blank says it; the program's `.disabled` and the environment's off are choices, not news.
    @Test(arguments: [false, true])
    func autoOffInAReleaseBuildIsTheOnlySilentOffThatIsReported(debug: Bool) {
        let environments: [[String: String]] = [
            [:], ["PERF_RECORDING": ""], ["PERF_RECORDING": "  "], ["PERF_RECORDING": "1"], ["PERF_RECORDING": "0"],
        ]
        for recording in [Perf.Recording.auto, .disabled, .enabled] {
            for environment in environments {
                let flag = InstallPolicy.RecordingFlag(environment: environment)
                let decision = InstallPolicy.recordingDecision(recording, environment: environment, debugBuild: debug)
                let record: Bool
                switch recording {
                case .enabled: record = flag != .off
                case .disabled: record = false
                case .auto: record = flag != .off && (debug || flag == .on)
                }
                let says = recording == .auto && !debug && flag == .unset
                #expect(
                    decision
                        == InstallPolicy.RecordingDecision(
                            record: record, warning: says ? InstallPolicy.autoOffInRelease : nil),
                    "\(recording) debug=\(debug) \(environment)")
            }
        }
    }

    /// The message says what happened and both ways to turn recording on, on one line.
    @Test func autoOffInAReleaseBuildSaysHowToRecord() throws {
        let message = InstallPolicy.autoOffInRelease
        #expect(message.hasPrefix("perf: recording to disk is off"))
        #expect(message.contains("PERF_RECORDING=1") && message.contains("recording: .enabled"))
        #expect(!message.contains("\n"))
        // The overview article quotes it as printed.
        let article = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/Perf/Perf.docc/Perf.md")
        #expect(try String(contentsOf: article, encoding: .utf8).contains("\n" + message + "\n"))
    }

    /// A value that is neither is ignored, and the warning names it and says what happens instead.
    @Test(arguments: [
        (Perf.Recording.auto, false, false, "recording to disk is off, as .auto is in a release build"),
        (.auto, true, true, "recording to disk is on, as .auto is in a debug build"),
        (.enabled, false, true, "recording to disk is on, as the configuration's .enabled says"),
        (.disabled, true, false, "recording to disk is off, as the configuration's .disabled says"),
    ])
    func anUnknownValueIsIgnoredAndNamed(recording: Perf.Recording, debug: Bool, record: Bool, outcome: String) {
        let decision = InstallPolicy.recordingDecision(
            recording, environment: ["PERF_RECORDING": "enable"], debugBuild: debug)
        #expect(decision.record == record)
        #expect(
            decision.warning
                == "perf: ignoring PERF_RECORDING=\"enable\" (not one of 1, true, yes, on, 0, false, no, off); "
                + outcome)
    }

    @Test func anUnknownValueIsQuotedAsGiven() throws {
        let decision = InstallPolicy.recordingDecision(
            .auto, environment: ["PERF_RECORDING": " Y\n"], debugBuild: false)
        let warning = try #require(decision.warning)
        #expect(warning.hasPrefix("perf: ignoring PERF_RECORDING=\" Y\\n\" "), "\(warning)")
        #expect(!warning.contains("\n"), "one line")
    }

    @Test func directoryPrecedence() {
        let app = Perf.AppInfo(name: "my service/../x")
        let configured = URL(fileURLWithPath: "/srv/perf")
        #expect(
            InstallPolicy.dataDirectory(configured: configured, app: app, environment: ["PERF_DIR": "/p"])
                == configured)
        #expect(
            InstallPolicy.dataDirectory(
                configured: nil, app: app, environment: ["PERF_DIR": "/p", "XDG_STATE_HOME": "/s"]
            )
            .path == "/p")
        #expect(
            InstallPolicy.dataDirectory(configured: nil, app: app, environment: ["XDG_STATE_HOME": "/s"]).path
                == "/s/perf/my_service_.._x")
        #expect(
            InstallPolicy.dataDirectory(configured: nil, app: app, environment: ["HOME": "/home/u"]).path
                == "/home/u/.local/state/perf/my_service_.._x")
    }

    @Test func systemdsStateDirectoryComesAfterPerfDirAndBeforeXDG() {
        let app = Perf.AppInfo(name: "svc")
        func directory(_ environment: [String: String]) -> String {
            InstallPolicy.dataDirectory(configured: nil, app: app, environment: environment).path
        }
        #expect(directory(["STATE_DIRECTORY": "/var/lib/svc", "XDG_STATE_HOME": "/s"]) == "/var/lib/svc/perf")
        #expect(directory(["STATE_DIRECTORY": "/var/lib/svc", "PERF_DIR": "/p"]) == "/p")
        // `StateDirectory=svc svc-cache`: the first.
        #expect(directory(["STATE_DIRECTORY": "/var/lib/svc:/var/lib/svc-cache"]) == "/var/lib/svc/perf")
        // Empty or relative: not systemd's; the next rule applies.
        #expect(directory(["STATE_DIRECTORY": "", "XDG_STATE_HOME": "/s"]) == "/s/perf/svc")
        #expect(directory(["STATE_DIRECTORY": "lib/svc", "HOME": "/h"]) == "/h/.local/state/perf/svc")
        #expect(directory(["STATE_DIRECTORY": ":/var/lib/svc", "HOME": "/h"]) == "/h/.local/state/perf/svc")
        #expect(
            InstallPolicy.dataDirectory(
                configured: URL(fileURLWithPath: "/srv/perf"), app: app,
                environment: ["STATE_DIRECTORY": "/var/lib/svc"]
            ).path == "/srv/perf")
    }

    @Test func relativeXDGStateHomeIsIgnored() {
        let dir = InstallPolicy.dataDirectory(
            configured: nil, app: Perf.AppInfo(name: "a"), environment: ["XDG_STATE_HOME": "rel", "HOME": "/h"])
        #expect(dir.path == "/h/.local/state/perf/a")
    }

    @Test(arguments: ["", "..", "...", "/"])
    func degenerateAppNamesStillNameADirectory(name: String) {
        let component = InstallPolicy.sanitizedPathComponent(name)
        #expect(!component.isEmpty)
        #expect(!component.contains("/"))
        #expect(component != "..")
    }
}
