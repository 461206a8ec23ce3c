import Foundation
// Reading perf-budgets.json: strict, because a typo in a budgets file must not silently turn a
// gate off. Unknown keys, unknown metrics and unitless times are errors that name the rule.
import Perf
import PerfCore

extension Budgets {
    /// The format version this build reads.
    public static let version = 1

    /// Reads and validates the budgets file at `url`.
    ///
    /// - Throws: ``Perf/BudgetsError`` naming the file and the rule: unreadable, not JSON, an
    ///   unknown key or metric, a missing or wrong unit, a bad level.
    public init(contentsOf url: URL) throws(BudgetsError) {
        let bytes: [UInt8]
        switch ReportFile.read(url.path, limit: 16 << 20) {
        case .success(let read): bytes = read
        case .failure(let error): throw BudgetsError(.invalidBudgets, path: url.path, error.message)
        }
        try self.init(bytes: bytes, path: url.path)
    }

    /// Reads and validates budgets-file bytes; `path` is used in messages.
    public init(bytes: [UInt8], path: String) throws(BudgetsError) {
        var reader = BudgetsReader(path: path)
        self = try reader.read(bytes)
    }
}

/// The parser; every failure names where in the file it is.
struct BudgetsReader {
    let path: String

    func fail(_ rule: String?, _ message: String) -> BudgetsError {
        BudgetsError(.invalidBudgets, path: path, rule: rule, message)
    }

    mutating func read(_ bytes: [UInt8]) throws(BudgetsError) -> Budgets {
        // The package's one JSON reader, strict as RFC 8259: a trailing comma, which Foundation's
        // JSONSerialization accepts on Linux, is refused here with its line and column.
        let parsed: Any
        do {
            parsed = try JSONScanner.foundationValue(bytes)
        } catch {
            throw fail(nil, error.kind == .trailingComma ? error.description : error.notJSON)
        }
        guard let object = parsed as? [String: Any] else { throw fail(nil, "not a JSON object") }
        try expectKeys(object, ["version", "defaults", "spans", "hangs", "ledger"], nil)
        guard let version = object["version"].flatMap(BudgetsReader.number) else {
            throw fail(nil, "missing \"version\"; write \"version\": \(Budgets.version)")
        }
        guard version == Double(Budgets.version) else {
            throw fail(nil, "version \(version) is not one this perf-report reads (\(Budgets.version))")
        }
        var budgets = Budgets(path: path)
        if let defaults = object["defaults"] {
            budgets.defaults = try readDefaults(defaults)
        }
        if let spans = object["spans"] {
            guard let rules = spans as? [Any] else { throw fail("spans", "must be an array of rules") }
            for (index, rule) in rules.enumerated() {
                budgets.spans.append(try readRule(rule, index: index, defaults: budgets.defaults))
            }
        }
        if let hangs = object["hangs"] {
            budgets.hangs = try readSectionLimits(hangs, "hangs", Budgets.hangMetrics)
        }
        if let ledger = object["ledger"] {
            budgets.ledger = try readSectionLimits(ledger, "ledger", Budgets.ledgerMetrics)
        }
        return budgets
    }

    func expectKeys(_ object: [String: Any], _ known: Set<String>, _ rule: String?) throws(BudgetsError) {
        for key in object.keys.sorted() where !known.contains(key) {
            throw fail(rule, "unknown key \"\(key)\"; expected one of \(known.sorted().joined(separator: ", "))")
        }
    }

    func readLevel(_ value: Any?, _ rule: String?, _ key: String) throws(BudgetsError) -> Budgets.Level? {
        guard let value else { return nil }
        guard let text = value as? String, let level = Budgets.Level(rawValue: text) else {
            throw fail(rule, "\"\(key)\" must be \"off\", \"warn\" or \"error\"")
        }
        return level
    }

    func readMinSamples(_ value: Any?, _ rule: String?) throws(BudgetsError) -> Budgets.MinimumSamples? {
        guard let value else { return nil }
        if let text = value as? String, text == "auto" { return .automatic }
        guard let number = BudgetsReader.number(value), number >= 1, number == number.rounded(), number < 1e12 else {
            throw fail(rule, "\"minSamples\" must be \"auto\" or a whole number of at least 1")
        }
        return .atLeast(Int64(number))
    }

    func readDefaults(_ value: Any) throws(BudgetsError) -> Budgets.Defaults {
        guard let object = value as? [String: Any] else { throw fail("defaults", "must be an object") }
        try expectKeys(object, ["level", "onMissing", "onInsufficient", "minSamples", "regression"], "defaults")
        var defaults = Budgets.Defaults()
        defaults.level = try readLevel(object["level"], "defaults", "level") ?? defaults.level
        defaults.onMissing = try readLevel(object["onMissing"], "defaults", "onMissing") ?? defaults.onMissing
        defaults.onInsufficient =
            try readLevel(object["onInsufficient"], "defaults", "onInsufficient") ?? defaults.onInsufficient
        if let minSamples = try readMinSamples(object["minSamples"], "defaults") { defaults.minSamples = minSamples }
        if let regression = object["regression"] {
            defaults.regression = try readRegression(regression, base: defaults.regression, "defaults.regression")
        }
        return defaults
    }

    func readRegression(
        _ value: Any, base: Budgets.RegressionPolicy, _ rule: String
    ) throws(BudgetsError) -> Budgets.RegressionPolicy {
        guard let object = value as? [String: Any] else { throw fail(rule, "\"regression\" must be an object") }
        try expectKeys(object, ["stat", "maxIncrease", "minDelta", "level", "requireBaseline"], rule)
        var policy = base
        if let stat = object["stat"] {
            guard let name = stat as? String, let metric = BudgetMetric(rawValue: name) else {
                throw fail(rule, "unknown regression stat \(describe(stat)); use one of \(metricNames)")
            }
            policy.stat = metric
        }
        if let increase = object["maxIncrease"] {
            guard let quantity = BudgetQuantity(json: increase), quantity.unit == .percent else {
                throw fail(rule, "\"maxIncrease\" must be a percentage such as \"15%\", not \(describe(increase))")
            }
            policy.maxIncreasePercent = quantity.value
        }
        if let delta = object["minDelta"] {
            guard let quantity = BudgetQuantity(json: delta) else {
                throw fail(rule, "\"minDelta\" \(describe(delta)) has no unit; write \"2ms\", \"1%\" or a count")
            }
            policy.minDelta = quantity
        }
        policy.level = try readLevel(object["level"], rule, "level") ?? policy.level
        if let required = object["requireBaseline"] {
            guard let flag = required as? Bool else { throw fail(rule, "\"requireBaseline\" must be true or false") }
            policy.requireBaseline = flag
        }
        guard policy.minDelta.unit == policy.stat.unit else {
            throw fail(
                rule,
                "\"minDelta\" \(policy.minDelta) does not measure the stat \(policy.stat.rawValue) "
                    + "(\(unitName(policy.stat.unit))); give a minDelta in its unit")
        }
        return policy
    }

    func readRule(_ value: Any, index: Int, defaults: Budgets.Defaults) throws(BudgetsError)
        -> Budgets.SpanRule
    {
        var label = "spans[\(index)]"
        guard let object = value as? [String: Any] else { throw fail(label, "must be an object") }
        guard let match = object["match"] as? String, !match.isEmpty else {
            throw fail(label, "needs a \"match\": a span name or a glob such as \"api.*\"")
        }
        label += " (\"\(match)\")"
        try expectKeys(
            object, ["match", "limits", "level", "onMissing", "minSamples", "regression", "message"], label)
        var rule = Budgets.SpanRule(match: match)
        rule.level = try readLevel(object["level"], label, "level")
        rule.onMissing = try readLevel(object["onMissing"], label, "onMissing")
        rule.minSamples = try readMinSamples(object["minSamples"], label)
        if let regression = object["regression"] {
            rule.regression = try readRegression(regression, base: defaults.regression, label)
        }
        if let message = object["message"] {
            guard let text = message as? String else { throw fail(label, "\"message\" must be a string") }
            rule.message = text
        }
        if let limits = object["limits"] {
            guard let table = limits as? [String: Any] else { throw fail(label, "\"limits\" must be an object") }
            for (name, limit) in table.sorted(by: { $0.key < $1.key }) {
                guard let metric = BudgetMetric(rawValue: name) else {
                    throw fail(label, "unknown metric \"\(name)\"; use one of \(metricNames)")
                }
                rule.limits[metric] = try readLimit(limit, unit: metric.unit, label, name)
            }
        }
        return rule
    }

    func readSectionLimits(
        _ value: Any, _ section: String, _ metrics: [String: BudgetQuantity.Unit]
    ) throws(BudgetsError) -> [String: Budgets.Limit] {
        guard let object = value as? [String: Any] else { throw fail(section, "must be an object") }
        var limits: [String: Budgets.Limit] = [:]
        for (name, limit) in object.sorted(by: { $0.key < $1.key }) {
            guard let unit = metrics[name] else {
                throw fail(
                    section, "unknown metric \"\(name)\"; use one of \(metrics.keys.sorted().joined(separator: ", "))")
            }
            limits[name] = try readLimit(limit, unit: unit, section, name)
        }
        return limits
    }

    func readLimit(
        _ value: Any, unit: BudgetQuantity.Unit, _ rule: String, _ metric: String
    ) throws(BudgetsError) -> Budgets.Limit {
        guard let object = value as? [String: Any] else {
            throw fail(rule, "limit \"\(metric)\" must be an object such as {\"max\": \(example(unit))}")
        }
        try expectKeys(object, ["max", "min", "range", "level", "message"], rule + " \(metric)")
        var limit = Budgets.Limit()
        func quantity(_ raw: Any, _ key: String) throws(BudgetsError) -> BudgetQuantity {
            guard let parsed = BudgetQuantity(json: raw) else {
                throw fail(rule, "\(metric).\(key): \(describe(raw)) is not a quantity; write \(example(unit))")
            }
            guard parsed.unit == unit else {
                throw fail(
                    rule,
                    "\(metric).\(key): \(describe(raw)) is a \(unitName(parsed.unit)), but \(metric) is a "
                        + "\(unitName(unit)); write \(example(unit))")
            }
            return parsed
        }
        if let max = object["max"] { limit.max = try quantity(max, "max") }
        if let min = object["min"] { limit.min = try quantity(min, "min") }
        if let range = object["range"] {
            guard limit.max == nil, limit.min == nil else {
                throw fail(rule, "\(metric): give either \"range\" or \"min\"/\"max\", not both")
            }
            guard let bounds = range as? [Any], bounds.count == 2 else {
                throw fail(rule, "\(metric).range must be [low, high], e.g. [\(example(unit)), \(example(unit))]")
            }
            limit.min = try quantity(bounds[0], "range")
            limit.max = try quantity(bounds[1], "range")
        }
        guard limit.min != nil || limit.max != nil else {
            throw fail(rule, "limit \"\(metric)\" needs \"max\", \"min\" or \"range\"")
        }
        if let low = limit.min, let high = limit.max, low.value > high.value {
            throw fail(rule, "\(metric): the minimum \(low) is above the maximum \(high)")
        }
        limit.level = try readLevel(object["level"], rule, "\(metric).level")
        if let message = object["message"] {
            guard let text = message as? String else { throw fail(rule, "\(metric).message must be a string") }
            limit.message = text
        }
        return limit
    }

    var metricNames: String { BudgetMetric.allCases.map(\.rawValue).joined(separator: ", ") }

    func unitName(_ unit: BudgetQuantity.Unit) -> String {
        switch unit {
        case .count: return "count"
        case .milliseconds: return "duration"
        case .percent: return "percentage"
        }
    }

    func example(_ unit: BudgetQuantity.Unit) -> String {
        switch unit {
        case .count: return "a bare number such as 200"
        case .milliseconds: return "a duration such as \"250ms\", \"1.5s\" or \"800us\""
        case .percent: return "a percentage such as \"10%\""
        }
    }

    /// A parsed JSON number as a double (`true`/`false`, as `NSNumber`s, are 1/0 as well); nil
    /// for anything else.
    static func number(_ value: Any) -> Double? {
        guard let number = value as? NSNumber else { return nil }
        let double = number.doubleValue
        return double.isFinite ? double : nil
    }

    func describe(_ value: Any) -> String {
        if let text = value as? String { return "\"\(text)\"" }
        if let number = BudgetsReader.number(value) { return BudgetQuantity.trimmed(number) }
        return "a \(type(of: value))"
    }
}
