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
        (.auto, ["PERF_RECORDING": "yes"], false, false),
    ])
    func consentGate(recording: Perf.Recording, environment: [String: String], debug: Bool, expected: Bool) {
        #expect(InstallPolicy.shouldRecord(recording, environment: environment, debugBuild: debug) == expected)
    }

    @Test func directoryPrecedence() {
        let app = Perf.AppInfo(name: "my service/../x")
        let configured = URL(fileURLWithPath: "/srv/perf")
        #expect(
            InstallPolicy.dataDirectory(configured: configured, app: app, environment: ["PERF_DIR": "/p"])
                == configured)
        #expect(
            InstallPolicy.dataDirectory(configured: nil, app: app, environment: ["PERF_DIR": "/p", "XDG_STATE_HOME": "/s"])
                .path == "/p")
        #expect(
            InstallPolicy.dataDirectory(configured: nil, app: app, environment: ["XDG_STATE_HOME": "/s"]).path
                == "/s/perf/my_service_.._x")
        #expect(
            InstallPolicy.dataDirectory(configured: nil, app: app, environment: ["HOME": "/home/u"]).path
                == "/home/u/.local/state/perf/my_service_.._x")
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
