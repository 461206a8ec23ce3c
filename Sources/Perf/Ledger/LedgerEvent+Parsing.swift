// Builds a LedgerEvent from a parsed line: schema v1 keys typed, every other key kept in `extra`.

extension LedgerEvent {
    /// Parses one line (without its `\n`); nil when the bytes are not a schema v1 object.
    ///
    /// Required: `v` (an integer ≥ 1), `ts` (ISO-8601 UTC), `kind`, `name` and `session`
    /// (strings). A schema key with the wrong type makes the line malformed; unknown keys are
    /// kept in ``extra`` unless their value is `null` or nested.
    static func parse(line: UnsafeBufferPointer<UInt8>) -> LedgerEvent? {
        guard let object = LedgerLineParser.parseObject(line) else { return nil }
        return LedgerEvent(object: object)
    }

    init?(object: [String: LedgerLineParser.Value]) {
        guard case .int(let version)? = object["v"], version >= 1,
            case .string(let ts)? = object["ts"], let timestampMs = LedgerTimestamp.parseISO8601(ts),
            case .string(let kind)? = object["kind"],
            case .string(let name)? = object["name"],
            case .string(let session)? = object["session"]
        else { return nil }
        self.init(kind: Kind(rawValue: kind), name: name, session: session, timestampMs: timestampMs)
        self.version = Int(clamping: version)
        var valid = true
        func double(_ key: String) -> Double? {
            switch object[key] {
            case nil, .null?: return nil
            case .int(let value)?: return Double(value)
            case .double(let value)?: return value
            default:
                valid = false
                return nil
            }
        }
        func string(_ key: String) -> String? {
            switch object[key] {
            case nil, .null?: return nil
            case .string(let value)?: return value
            default:
                valid = false
                return nil
            }
        }
        func strings(_ key: String) -> [String]? {
            switch object[key] {
            case nil, .null?: return nil
            case .strings(let value)?: return value
            default:
                valid = false
                return nil
            }
        }
        durationMs = double("durationMs")
        budgetMs = double("budgetMs")
        lowerMs = double("lowerMs")
        upperMs = double("upperMs")
        stallMs = double("stallMs")
        exit = string("exit")
        detail = string("detail")
        site = string("site")
        suppressed = string("suppressed")
        thread = string("thread")
        culprit = string("culprit")
        stack = strings("stack")
        stuckFrames = strings("stuckFrames")
        switch object["count"] {
        case nil, .null?: count = nil
        case .int(let value)?: count = Int(exactly: value)
        default: valid = false
        }
        switch object["fatal"] {
        case nil, .null?: fatal = nil
        case .bool(let value)?: fatal = value
        default: valid = false
        }
        guard valid else { return nil }
        for (key, value) in object where LedgerEncoder.FixedKey(name: key) == nil {
            if let value = LedgerValue(parsed: value) { extra[key] = value }
        }
    }
}

extension LedgerValue {
    /// A parsed value as a ledger value; `nil` for `null` and mixed arrays, which are skipped
    /// (inside an object too).
    init?(parsed value: LedgerLineParser.Value) {
        switch value {
        case .string(let string): self = .string(string)
        case .int(let integer): self = .int(integer)
        case .double(let number): self = .double(number)
        case .bool(let flag): self = .bool(flag)
        case .strings(let strings): self = .strings(strings)
        case .object(let object): self = .object(object.compactMapValues(LedgerValue.init(parsed:)))
        case .objects(let objects): self = .objects(objects.map { $0.compactMapValues(LedgerValue.init(parsed:)) })
        case .null, .other: return nil
        }
    }
}
