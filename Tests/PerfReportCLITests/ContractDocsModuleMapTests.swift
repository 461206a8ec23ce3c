// ModuleMap.md against Package.swift: every product has its row.
import Foundation
import Testing

@Suite struct ContractDocsModuleMapTests {
    /// The products of Package.swift, read from its text.
    static func packageProducts() throws -> Set<String> {
        let manifest = try String(
            contentsOf: ContractArticle.sources.appendingPathComponent("../Package.swift"), encoding: .utf8)
        var products: Set<String> = []
        for marker in [".library(name: \"", ".executable(name: \""] {
            for piece in manifest.components(separatedBy: marker).dropFirst() {
                if let end = piece.firstIndex(of: "\"") { products.insert(String(piece[..<end])) }
            }
        }
        return products
    }

    @Test func everyProductIsInTheModuleMap() throws {
        let documented = Set(
            try ContractArticle(module: "Perf", "ModuleMap").table(under: "## Which product to depend on").map(\.key))
        let products = try Self.packageProducts()
        #expect(products.count >= 5, "Package.swift's products were read: \(products)")
        #expect(documented == products)
        // PerfCore is Perf's engine, not a product: a program names what it needs through Perf.
        #expect(!products.contains("PerfCore"))
    }
}
