// PLACEHOLDER: replaced once JournalKit has real tests.
import Testing
@testable import JournalKit

@Test func moduleLoads() {
    #expect(Bool(true))
}
