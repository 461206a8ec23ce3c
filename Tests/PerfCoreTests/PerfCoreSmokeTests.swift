// PLACEHOLDER: replaced once PerfCore has real tests.
import Testing
@testable import PerfCore

@Test func moduleLoads() {
    #expect(Bool(true))
}
