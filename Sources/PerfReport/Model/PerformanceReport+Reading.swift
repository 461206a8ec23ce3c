// How a report is read: strictly (a value of the wrong type rejects it, naming its key path) or
// leniently (such a value is left out and listed), through the decoding in Perf's `Decoding/`.
import Foundation
import Perf
import PerfCore

extension PerformanceReport {
    /// How a reader treats values of the wrong type. Either way, unknown keys are ignored, an
    /// absent optional value reads as `nil` (an absent count as 0), and a file that is not a
    /// report of a version this build reads is rejected.
    public enum Reading: Sendable {
        /// Any value of the wrong type rejects the report, naming its key path.
        case strict
        /// A value of the wrong type reads as absent; a list or map entry missing what identifies
        /// it (a session's `id`, an event's `ts`, …) is left out. Each is listed in
        /// ``PerformanceReport/problems``.
        case lenient
    }

    /// A value a report holds with the wrong type: where, and what was expected.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        /// The key path, e.g. `spans.db.get.count` or `ledger.events[3].ts`.
        public var path: String
        /// What is wrong, e.g. `expected a number`.
        public var message: String

        /// Creates a problem.
        public init(path: String, message: String) {
            self.path = path
            self.message = message
        }

        /// `"spans.db.get.count": expected a number`.
        public var description: String { "\"\(path)\": \(message)" }
    }
}

extension ReportDecodingContext {
    /// The context of one decode read as `reading` says.
    convenience init(reading: PerformanceReport.Reading, skipsHistograms: Bool = false) {
        self.init(lenient: reading == .lenient, skipsHistograms: skipsHistograms)
    }

    /// Foundation's decoder, reading through this context: reports are read with it, diagnostic
    /// payloads with the lazy decoder.
    func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.userInfo[.reportDecoding] = self
        return decoder
    }
}

extension PerformanceReport {
    /// Why `bytes` the scanner refused are not a report: bad UTF-8 with its byte, a ledger with
    /// what it is, a truncated file, or the line, column and rule of the first byte that is not
    /// JSON.
    static func notJSON(_ bytes: [UInt8], path: String, _ error: JSONSyntaxError) -> String {
        if let offset = JSONScanner.firstInvalidUTF8(bytes) {
            return "not valid JSON (invalid UTF-8 at byte \(offset))"
        }
        if let ledger = LedgerLookalike.problem(bytes, path: path) { return ledger }
        return error.notJSON
    }
}

extension PerformanceReport.Problem {
    /// The problem a decode noted.
    init(_ problem: DecodingProblem) { self.init(path: problem.path, message: problem.message) }
}

extension PerformanceReport.Timestamp: DecodingNoun {
    /// How a value that is not a time is described.
    package static var decodingNoun: String { "an ISO-8601 UTC time such as 2026-12-02T13:00:00.000Z" }
}
