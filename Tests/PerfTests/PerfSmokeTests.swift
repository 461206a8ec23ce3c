// PLACEHOLDER: replaced once Perf has real tests.
import Testing
@testable import Perf

@Test func moduleLoads() {
    #expect(Bool(true))
}
