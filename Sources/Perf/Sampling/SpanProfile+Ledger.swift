// A span's profile as the ledger writes and reads it: the `profile` object of an over-budget
// line, and the text a profile slot holds.
import PerfCore

extension SpanProfile {
    /// The `profile` object: `samples`, `suspended`, `missed`, `intervalMs`, `top` (each entry
    /// `count`, `culprit`, `wait`, `stack`), and `capped` and `open` when they say something.
    package var ledgerValue: LedgerValue {
        var object: [String: LedgerValue] = [
            "samples": .int(Int64(samples)), "suspended": .int(Int64(suspended)), "missed": .int(Int64(missed)),
            "intervalMs": .double(intervalMs),
            "top": .objects(
                top.map { stack in
                    var entry: [String: LedgerValue] = ["count": .int(Int64(stack.count))]
                    if let culprit = stack.culprit { entry["culprit"] = .string(culprit) }
                    if let wait = stack.wait { entry["wait"] = .string(wait) }
                    if !stack.frames.isEmpty { entry["stack"] = .strings(stack.frames) }
                    return entry
                }),
        ]
        if capped { object["capped"] = .bool(true) }
        if !open.isEmpty { object["open"] = .strings(open) }
        return .object(object)
    }

    /// A `profile` object as read from a line or a slot; `nil` when it is not one. Unknown keys
    /// are skipped; a count that is not a non-negative integer makes it unreadable.
    package init?(ledgerValue: LedgerValue) {
        guard case .object(let object) = ledgerValue else { return nil }
        func count(_ key: String) -> Int? {
            switch object[key] {
            case nil: return 0
            case .int(let value)? where value >= 0: return Int(exactly: value)
            default: return nil
            }
        }
        guard let samples = count("samples"), let suspended = count("suspended"), let missed = count("missed")
        else { return nil }
        let interval: Double
        switch object["intervalMs"] {
        case .int(let value)?: interval = Double(value)
        case .double(let value)?: interval = value
        default: return nil
        }
        var top: [Stack] = []
        if case .objects(let entries)? = object["top"] {
            for entry in entries {
                guard case .int(let value)? = entry["count"], value >= 0, let count = Int(exactly: value) else {
                    return nil
                }
                var stack = Stack(count: count, culprit: nil, wait: nil, frames: [])
                if case .string(let culprit)? = entry["culprit"] { stack.culprit = culprit }
                if case .string(let wait)? = entry["wait"] { stack.wait = wait }
                if case .strings(let frames)? = entry["stack"] { stack.frames = frames }
                top.append(stack)
            }
        }
        var open: [String] = []
        if case .strings(let names)? = object["open"] { open = names }
        var capped = false
        if case .bool(let flag)? = object["capped"] { capped = flag }
        self.init(
            samples: samples, suspended: suspended, missed: missed, intervalMs: interval, capped: capped, top: top,
            open: open)
    }

    /// The profile as one JSON object's bytes (what a profile slot holds): the bytes
    /// ``ledgerValue`` encodes to, written directly, since the sampler rewrites a slot after
    /// every sample.
    package var jsonBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256 + top.reduce(0) { $0 + 64 + 48 * $1.frames.count })
        func key(_ name: StaticString, first: Bool = false) {
            if !first { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            out.append(contentsOf: "\":".utf8)
        }
        func strings(_ values: [String]) {
            out.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                LedgerEncoder.appendQuoted(value, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        }
        // Keys in byte order, as LedgerEncoder writes an object.
        out.append(UInt8(ascii: "{"))
        var first = true
        if capped {
            key("capped", first: true)
            out.append(contentsOf: "true".utf8)
            first = false
        }
        key("intervalMs", first: first)
        LedgerEncoder.appendDouble(intervalMs, into: &out)
        key("missed")
        LedgerEncoder.writeInteger(Int64(missed), into: &out)
        if !open.isEmpty {
            key("open")
            strings(open)
        }
        key("samples")
        LedgerEncoder.writeInteger(Int64(samples), into: &out)
        key("suspended")
        LedgerEncoder.writeInteger(Int64(suspended), into: &out)
        key("top")
        out.append(UInt8(ascii: "["))
        for (index, stack) in top.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "{"))
            key("count", first: true)
            LedgerEncoder.writeInteger(Int64(stack.count), into: &out)
            if let culprit = stack.culprit {
                key("culprit")
                LedgerEncoder.appendQuoted(culprit, into: &out)
            }
            if !stack.frames.isEmpty {
                key("stack")
                strings(stack.frames)
            }
            if let wait = stack.wait {
                key("wait")
                LedgerEncoder.appendQuoted(wait, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: "]}".utf8)
        return out
    }

    /// A profile from the bytes ``jsonBytes`` wrote; `nil` for anything else (never a crash).
    package init?(jsonBytes bytes: UnsafeBufferPointer<UInt8>) {
        guard let object = LedgerLineParser.parseObject(bytes),
            let value = LedgerValue(parsed: .object(object))
        else { return nil }
        self.init(ledgerValue: value)
    }
}

extension LedgerEvent {
    /// The span sampler's `profile` of an over-budget span line, when it has a readable one.
    public var profile: SpanProfile? {
        extra["profile"].flatMap(SpanProfile.init(ledgerValue:))
    }
}
