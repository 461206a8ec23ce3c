// The metrics endpoint against hostile clients over real sockets: 400 seeded inputs (truncated
// requests, huge headers, binary garbage, CR/LF variants, NULs), each answered with a whole
// response or closed, never left hanging; a valid scrape is served after every 50 of them.
import Foundation
import Glibc
import PerfTestSupport
import Testing

@testable import Perf

// Serialized with the suites that install Perf: Perf.shutdown() stops every endpoint.
extension PerfGlobalStateTests {
    @Suite struct MetricsEndpointFuzzTests {
        static let knownStatuses: Set<Int> = [200, 400, 404, 405, 408, 431, 505]

        @Test func fuzzedClientsAreAnsweredOrClosedAndTheEndpointKeepsServing() throws {
            let seed = SeededRandom.makeSeed()
            var random = SeededRandom(seed: seed)
            let endpoint = try startMetricsEndpoint(readTimeout: .milliseconds(1500))
            defer { endpoint.stop() }
            var statuses: [Int: Int] = [:]
            var closedWithoutAnswer = 0
            for index in 0..<400 {
                let (bytes, expected) = MetricsFuzz.input(&random)
                let (answer, ending) = try LoopbackHTTP.exchange(port: endpoint.port, bytes, timeoutSeconds: 5)
                #expect(ending != .timedOut, "case \(index), seed \(seed): no answer and no close: \(bytes.debugText)")
                if answer.isEmpty {
                    closedWithoutAnswer += 1
                } else {
                    let response =
                        LoopbackHTTPResponse(answer, headersOnly: expected?.headersOnly ?? false)
                        ?? LoopbackHTTPResponse(answer, headersOnly: true)
                    let status = try #require(response?.status, "case \(index), seed \(seed): not a response")
                    #expect(Self.knownStatuses.contains(status), "case \(index), seed \(seed): status \(status)")
                    if let expected { #expect(status == expected.status.rawValue, "case \(index), seed \(seed)") }
                    statuses[status, default: 0] += 1
                }
                if index % 50 == 49 {
                    #expect(
                        try LoopbackHTTP.request(port: endpoint.port)?.status == 200,
                        "after case \(index), seed \(seed)")
                }
            }
            print(
                "fuzzedClients: 400 cases, statuses \(statuses.sorted { $0.key < $1.key }), \(closedWithoutAnswer) closed unanswered"
            )
            // Only an empty input (a connect and a half-close) goes unanswered.
            #expect(closedWithoutAnswer < 40)
            #expect(endpoint.counters.timedOut == 0)
        }

        /// Inputs left open (no half-close): the ones the endpoint cannot answer yet are cut at the
        /// deadline, several at once, and the endpoint still serves.
        @Test func fuzzedClientsThatStaySilentAreCutAtTheDeadline() throws {
            let seed = SeededRandom.makeSeed()
            var random = SeededRandom(seed: seed)
            let endpoint = try startMetricsEndpoint(readTimeout: .milliseconds(300))
            defer { endpoint.stop() }
            var connections: [LoopbackConnection] = []
            for _ in 0..<12 {
                let (bytes, _) = MetricsFuzz.input(&random)
                let connection = try LoopbackConnection(port: endpoint.port)
                connection.send(Array(bytes.prefix(4096)))
                connections.append(connection)
            }
            for (index, connection) in connections.enumerated() {
                let (answer, ending) = connection.readToEnd(timeoutSeconds: 10)
                #expect(ending != .timedOut, "connection \(index), seed \(seed)")
                if !answer.isEmpty {
                    let status =
                        LoopbackHTTPResponse(answer)?.status ?? LoopbackHTTPResponse(answer, headersOnly: true)?.status
                    #expect(status.map(Self.knownStatuses.contains) == true, "connection \(index), seed \(seed)")
                }
            }
            #expect(try LoopbackHTTP.request(port: endpoint.port)?.status == 200)
        }
    }
}
