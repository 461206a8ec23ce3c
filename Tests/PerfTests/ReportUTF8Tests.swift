// A report is JSON, and JSON is UTF-8: a bad byte anywhere, even in a member no reader reads, makes
// the file invalid input, as it is for JSONSerialization (a fuzzed check once read one).
import Foundation
import PerfReport
import PerfTestSupport
import Testing

@testable import Perf

@Suite struct ReportUTF8Tests {
    @Test func aBadByteInAnUnknownMemberIsRefusedByteNamed() throws {
        let golden = try [UInt8](Data(contentsOf: ReportFixture.golden))
        #expect((try? PerformanceReport(bytes: golden, path: "golden.json")) != nil)
        let brace = try #require(golden.firstIndex(of: UInt8(ascii: "{")))
        for bad: [UInt8] in [[0xAD], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82]] {
            var bytes = golden
            bytes.insert(contentsOf: Array("\"x".utf8) + bad + Array("y\":1,".utf8), at: brace + 1)
            #expect(throws: Perf.ReportError.self) { try PerformanceReport(bytes: bytes, path: "bad.json") }
            #expect((try? JSONSerialization.jsonObject(with: Data(bytes))) == nil, "JSONSerialization refuses it too")
            let result = Result { () throws(Perf.ReportError) in try PerformanceReport(bytes: bytes, path: "bad.json") }
            if case .failure(let error) = result { #expect("\(error)".contains("invalid UTF-8 at byte \(brace + 3)")) }
        }
        // Valid multi-byte text is fine anywhere.
        var bytes = golden
        bytes.insert(contentsOf: Array("\"é€😀\":1,".utf8), at: brace + 1)
        #expect((try? PerformanceReport(bytes: bytes, path: "ok.json")) != nil)
    }
}
