// The checks every reader of performance-report.json makes first, and JSON number reading.
import Foundation

/// Validation shared by every reader of reports.
package enum ReportDocument {
    /// The report's top-level object, after checking it is JSON, a report, and a version this
    /// build reads.
    package static func validate(bytes: [UInt8], path: String) throws(Perf.ReportError) -> [String: Any] {
        guard !bytes.isEmpty else { throw Perf.ReportError(.invalidReport, path: path, "the file is empty") }
        let parsed = try? JSONSerialization.jsonObject(with: Data(bytes), options: [])
        guard let parsed else {
            throw Perf.ReportError(.invalidReport, path: path, "not valid JSON (truncated or corrupt)")
        }
        guard let object = parsed as? [String: Any] else {
            throw Perf.ReportError(.invalidReport, path: path, "not a performance report (not a JSON object)")
        }
        guard let schema = object["schema"] else {
            throw Perf.ReportError(.invalidReport, path: path, "not a performance report (missing \"schema\")")
        }
        guard let name = schema as? String, name == Perf.ReportBuilder.schema else {
            throw Perf.ReportError(
                .invalidReport, path: path, "not a performance report (schema is not \"\(Perf.ReportBuilder.schema)\")")
        }
        guard let version = object["schemaVersion"].flatMap(number), version == version.rounded(), version >= 1 else {
            throw Perf.ReportError(.invalidReport, path: path, "missing or invalid \"schemaVersion\"")
        }
        guard version <= Double(Perf.ReportBuilder.schemaVersion) else {
            throw Perf.ReportError(
                .newerSchema, path: path,
                "schemaVersion \(Int64(clamping: Int(min(version, 1e15)))) is newer than this perf-report reads "
                    + "(\(Perf.ReportBuilder.schemaVersion)); use a newer perf-report")
        }
        for (key, isValid) in [("spans", object["spans"] is [String: Any]), ("sessions", object["sessions"] is [Any])]
        where !isValid {
            throw Perf.ReportError(.invalidReport, path: path, "\"\(key)\" is missing or has the wrong type")
        }
        return object
    }

    /// A JSON number as a double (Foundation bridges `true`/`false` to 1/0 as well).
    package static func number(_ value: Any) -> Double? {
        guard let number = value as? NSNumber else { return nil }
        let double = number.doubleValue
        return double.isFinite ? double : nil
    }

    package static func double(_ value: Any?) -> Double { value.flatMap(number) ?? 0 }

    package static func int(_ value: Any?) -> Int64 {
        guard let double = value.flatMap(number) else { return 0 }
        return Int64(clamping: Int(max(min(double, 9e18), -9e18)))
    }
}
