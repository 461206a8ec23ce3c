// Replays a recovered session journal into a RecoveredSession: pure, no I/O.
import Foundation
import JournalKit

/// Turns a journal's recovered bytes into the story of its session.
enum SessionIngest {
    /// Replays what `Journal.recover` returned for the session in directory `id`.
    static func ingest(id: String, recovery: Journal.Recovery) -> RecoveredSession {
        ingest(
            id: id, headers: recovery.headers, entries: recovery.entries, tornTail: recovery.tornTail,
            droppedOlderEntries: recovery.droppedOlderEntries)
    }

    /// Replays a journal's headers and entries, in append order.
    static func ingest(
        id: String, headers: [Data], entries: [Data], tornTail: Bool, droppedOlderEntries: Bool
    ) -> RecoveredSession {
        var info: SessionInfo?
        var spans: [UInt64: JournalledSpan] = [:]
        var markers: [UInt64: OngoingMarker] = [:]
        var endWallNanos: UInt64?
        var undecodable = 0
        var skippedUnknown = 0
        var sequences: [UInt64] = []

        for header in headers {
            if case .start(let headerInfo)? = try? SessionEntryCodec.decode(header)?.entry, info == nil {
                info = headerInfo
            }
        }
        // Replayed in sequence order: concurrent appends may reach the journal slightly out of it.
        var decodedEntries: [SequencedEntry] = []
        for data in entries {
            do {
                if let decoded = try SessionEntryCodec.decode(data) {
                    decodedEntries.append(decoded)
                } else {
                    skippedUnknown += 1
                }
            } catch {
                undecodable += 1
            }
        }
        for decoded in decodedEntries.sorted(by: { $0.sequence < $1.sequence }) {
            switch decoded.entry {
            case .start(let entryInfo):
                // A journal without header support would hold the header as its first entry.
                if info == nil { info = entryInfo }
                continue
            case .spanBegan(let span):
                spans[span.id] = span
            case .spanClosed(let id):
                spans[id] = nil
            case .ongoingSet(let marker):
                markers[marker.id] = marker
            case .ongoingCleared(let id):
                markers[id] = nil
            case .end(let wallNanos):
                endWallNanos = wallNanos
            }
            sequences.append(decoded.sequence)
        }

        guard let info else {
            return RecoveredSession(
                id: id, info: nil,
                status: .unreadable(
                    reason: "no readable session header among \(headers.count) header(s) and "
                        + "\(entries.count) entries"))
        }
        let orphaned = spans.values.sorted { ($0.startWallNanos, $0.id) < ($1.startWallNanos, $1.id) }
        let status: RecoveredSession.Status = endWallNanos.map { .terminated(endWallNanos: $0) } ?? .crashed
        let fatal =
            endWallNanos == nil
            ? markers.values.sorted { ($0.startedWallNanos, $0.id) < ($1.startedWallNanos, $1.id) } : []

        var losses: [String] = []
        if tornTail { losses.append("the journal's tail was torn; entries after it are lost") }
        let firstSequence = sequences.min()
        if droppedOlderEntries || (firstSequence ?? 1) > 1 {
            losses.append(
                "older entries were dropped to stay within the byte budget; spans and markers still open were "
                    + "re-journalled since, so only their earlier history is lost")
        }
        let gap = missingCount(in: sequences)
        if gap > 0 { losses.append("\(gap) entries are missing between the first and the last kept") }
        if undecodable > 0 { losses.append("\(undecodable) entries did not decode and were skipped") }
        if skippedUnknown > 0 {
            losses.append("\(skippedUnknown) entries of a newer format or unknown type were skipped")
        }
        return RecoveredSession(
            id: id, info: info, status: status, orphanedSpans: orphaned, fatalMarkers: fatal,
            recoveryNote: losses.isEmpty ? nil : losses.joined(separator: "; "))
    }

    /// How many numbers between the smallest and the largest of `sequences` are absent.
    static func missingCount(in sequences: [UInt64]) -> UInt64 {
        let distinct = Set(sequences)
        guard let low = distinct.min(), let high = distinct.max() else { return 0 }
        return (high - low + 1) - UInt64(distinct.count)
    }
}
