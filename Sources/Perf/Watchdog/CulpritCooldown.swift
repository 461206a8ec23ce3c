// Keeps repeated episodes with the same culprit from flooding the ledger with identical stacks.

/// Decides which episodes are full records: the first per culprit within the cooldown.
struct CulpritCooldown {
    private let cooldownNanos: UInt64
    private var lastFull: [String: UInt64] = [:]

    init(cooldownNanos: UInt64) { self.cooldownNanos = cooldownNanos }

    /// Whether an episode blamed on `culprit` at `now` gets a full record (and if so, restarts the
    /// culprit's cooldown). Episodes without a culprit share one key.
    mutating func admit(culprit: String?, now: UInt64) -> Bool {
        let key = culprit ?? ""
        if let last = lastFull[key], now - last < cooldownNanos { return false }
        lastFull[key] = now
        if lastFull.count > 1024 {
            lastFull = lastFull.filter { now - $0.value < cooldownNanos }
        }
        return true
    }
}
