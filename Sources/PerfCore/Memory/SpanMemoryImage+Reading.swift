// What a span memory holds: per-name histograms (stripes summed) and the flight recorder's slots.
import CPerfShims

extension SpanMemoryImage {
    /// The histograms of a span memory, with what could not be trusted.
    struct Histograms {
        var byName: [String: LatencyHistogram] = [:]
        /// Over-budget and exit counts by name; names that never had one are absent.
        var tallies: [String: SpanTally] = [:]
        /// Exclusive stripes whose sequence word was odd: one record was cut mid-write (by a kill).
        /// It may or may not count, and the record before it (whose late tick it was adding) may
        /// count twice; sum and extremes are kept consistent with the buckets.
        var tornRecords = 0
        /// Entries skipped: a check word that does not match the name (or a name out of bounds).
        var damagedEntries = 0
        /// Stripe or chunk references skipped: past the bytes present or not pointing at a stripe.
        var badReferences = 0
    }

    /// Every entry's stripes summed, merged by name (two literals with one text share a name).
    func histograms() -> Histograms {
        var result = Histograms()
        var counts = [UInt64](repeating: 0, count: HistogramLayout.bucketCount)
        for index in 0..<entryCount {
            let entry = entriesOffset + index * L.entryBytes
            guard let name = name(ofEntry: index) else {
                if let check = word(entry + L.entryCheckOffset), check != 0 { result.damagedEntries += 1 }
                continue
            }
            if let tally = tally(ofEntry: entry, badReferences: &result.badReferences) {
                result.tallies[name, default: SpanTally()].merge(tally)
            }
            for bucket in counts.indices { counts[bucket] = 0 }
            var merged: Totals?
            for stripeIndex in 0..<L.stripesPerEntry {
                guard let ref = half(entry + L.entryStripesOffset + stripeIndex * 4), ref != 0 else { continue }
                guard let stripe = arenaStart(ref, bytes: L.stripeBytes),
                    word(stripe + L.stripeTagOffset) == L.stripeTag
                else {
                    result.badReferences += 1
                    continue
                }
                let exclusive = stripeIndex < AtomicHistogramEntry.exclusiveStripeCount
                if exclusive, let sequence = word(stripe), sequence & 1 != 0 { result.tornRecords += 1 }
                guard let totals = accumulate(stripe: stripe, into: &counts, badReferences: &result.badReferences)
                else { continue }
                merged = merged.map { $0.combined(with: totals) } ?? totals
            }
            guard let merged else { continue }
            let histogram = LatencyHistogram(
                bucketCounts: counts, sumNanos: merged.sumNanos, minNanos: merged.minNanos, maxNanos: merged.maxNanos)
            result.byName[name, default: LatencyHistogram()].merge(histogram)
        }
        return result
    }

    /// The entry's tally block, when it has one that checks out.
    private func tally(ofEntry entry: Int, badReferences: inout Int) -> SpanTally? {
        guard let ref = half(entry + L.entryTallyOffset), ref != 0 else { return nil }
        guard let block = arenaStart(ref, bytes: L.tallyBytes), word(block + L.tallyTagOffset) == L.tallyTag else {
            badReferences += 1
            return nil
        }
        func value(_ which: SpanMemoryLayout.TallyWord) -> UInt64 { word(block + which.rawValue * 8) ?? 0 }
        let tally = SpanTally(
            overBudget: value(.overBudget), overBudgetNanos: value(.overBudgetNanos), failure: value(.failure),
            cancelled: value(.cancelled), superseded: value(.superseded), expired: value(.expired))
        return tally.isEmpty ? nil : tally
    }

    /// What one stripe adds to a snapshot, besides its bucket counts.
    struct Totals {
        var sumNanos: UInt64
        var minNanos: UInt64
        var maxNanos: UInt64

        func combined(with other: Totals) -> Totals {
            Totals(
                sumNanos: LatencyHistogram.saturatingAdd(sumNanos, other.sumNanos),
                minNanos: min(minNanos, other.minNanos), maxNanos: max(maxNanos, other.maxNanos))
        }
    }

    /// Adds the stripe's buckets (and its pending tick) to `counts` with relaxed reads while its writers may be recording,
    /// and returns its totals; nil when the stripe is empty.
    ///
    /// Buckets are read first and the extremes last, the reverse of the order the record methods
    /// write them. Because relaxed reads promise no order (and a kill may cut a record short), the
    /// totals are then made consistent with the buckets read: an extreme not yet visible is
    /// replaced by the bound of the outermost non-empty bucket, and the sum is clamped to what
    /// `count` values between min and max can add up to.
    private func accumulate(stripe: Int, into counts: inout [UInt64], badReferences: inout Int) -> Totals? {
        var count: UInt64 = 0
        var first = -1
        var last = -1
        for group in 0..<(HistogramLayout.bucketCount / L.bucketsPerChunk) {
            guard let ref = half(stripe + L.stripeChunkRefsOffset + group * 4), ref != 0 else { continue }
            guard let chunk = arenaStart(ref, bytes: L.chunkBytes) else {
                badReferences += 1
                continue
            }
            for slot in 0..<L.bucketsPerChunk {
                guard let bucket = word(chunk + slot * 8), bucket != 0 else { continue }
                let index = group * L.bucketsPerChunk + slot
                counts[index] &+= bucket
                count &+= bucket
                if first < 0 || index < first { first = index }
                last = max(last, index)
            }
        }
        // An exclusive stripe's last record, whose tick its next record adds to the chunk.
        if let pending = word(stripe + L.stripePendingOffset), pending != 0 {
            let index = Int(pending & 0xFFFF_FFFF) - 1
            if index >= 0, index < HistogramLayout.bucketCount {
                counts[index] &+= 1
                count &+= 1
                if first < 0 || index < first { first = index }
                last = max(last, index)
            } else {
                badReferences += 1
            }
        }
        guard first >= 0 else { return nil }
        var minimum = ~(word(stripe + L.stripeInvertedMinWord * 8) ?? 0)
        var maximum = word(stripe + L.stripeMaxWord * 8) ?? 0
        if HistogramLayout.index(ofNanos: minimum) != first { minimum = HistogramLayout.lowerBound(ofIndex: first) }
        if HistogramLayout.index(ofNanos: maximum) != last { maximum = HistogramLayout.upperBound(ofIndex: last) }
        let (lowest, lowOverflow) = minimum.multipliedReportingOverflow(by: count)
        let (highest, highOverflow) = maximum.multipliedReportingOverflow(by: count)
        var sum = word(stripe + L.stripeSumWord * 8) ?? 0
        if lowOverflow { sum = .max } else if sum < lowest { sum = lowest }
        if !highOverflow && sum > highest { sum = highest }
        return Totals(sumNanos: sum, minNanos: minimum, maxNanos: maximum)
    }

    /// The flight recorder's newest whole slots (at most its capacity), oldest end first, named
    /// from the entries; `recorded` is the tickets its lanes handed out, as far as the newest
    /// slot of each lane tells.
    ///
    /// For a crashed process's file: a slot's name pointer belonged to that process, so names come
    /// from `name_ref` (the entry it was recorded under); a slot cut mid-write (odd sequence, or a
    /// check word that does not match) is counted in `torn` and skipped.
    func flightEntries() -> (entries: [FlightRecorder.Entry], torn: Int, recorded: UInt64) {
        var whole: [perf_flight_slot] = []
        var newest = [UInt64](repeating: 0, count: ringLanes)
        var torn = 0
        for index in 0..<ringCapacity * ringLanes {
            let offset = ringOffset + index * L.slotBytes
            guard offset + L.slotBytes <= count, offset + L.slotBytes <= arenaOffset else { break }
            let slot = (base + offset).load(as: perf_flight_slot.self)
            guard slot.seq != 0 else { continue }
            let expected = perf_flight_check(
                slot.seq, slot.name, perf_flight_name_word(slot.name_len, slot.name_ref), slot.start_ns,
                slot.duration_ns, slot.budget_ns, slot.tid, slot.exit)
            guard slot.seq & 1 == 0, slot.check == expected else {
                torn += 1
                continue
            }
            whole.append(slot)
            let lane = index / ringCapacity
            newest[lane] = max(newest[lane], slot.seq)
        }
        // What the live ring's reader returns, by the same function.
        let kept = whole.withUnsafeMutableBufferPointer {
            Int(perf_flight_keep_newest($0.baseAddress, UInt64($0.count), UInt64(ringCapacity)))
        }
        var names: [UInt32: String] = [:]
        let entries = whole.prefix(kept).map { slot in
            FlightRecorder.Entry(
                name: name(of: slot, known: &names), threadID: slot.tid, startMonotonicNanos: slot.start_ns,
                durationNanos: slot.duration_ns, budgetNanos: slot.budget_ns == .max ? nil : slot.budget_ns,
                exit: FlightRecorder.exit(code: slot.exit))
        }
        return (entries, torn, newest.reduce(0) { $0 &+ $1 / 2 })
    }

    /// A recovered slot's span name, from the entry it was recorded under (looked up once per entry).
    private func name(of slot: perf_flight_slot, known names: inout [UInt32: String]) -> String {
        if slot.name_ref != 0 {
            if let known = names[slot.name_ref] { return known }
            let name = self.name(ofEntry: Int(slot.name_ref) - 1) ?? FlightRecorder.unknownName
            names[slot.name_ref] = name
            return name
        }
        if slot.name_len & FlightRecorder.scalarFlag != 0 {
            return Unicode.Scalar(slot.name_len & ~FlightRecorder.scalarFlag).map(String.init) ?? "?"
        }
        return FlightRecorder.unknownName
    }
}
