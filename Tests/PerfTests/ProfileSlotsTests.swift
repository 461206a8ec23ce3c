// The profile slots: the owner takes exactly its own span's profile, the sampler frees what is
// taken or abandoned, a profile too long for a slot loses frames rather than samples, and the
// recovery reader survives any bytes.
import Foundation
import PerfCore
import PerfTestSupport
import Testing

@testable import Perf

@Suite struct ProfileSlotsTests {
    private func profile(stacks: Int, frames: Int) -> SpanProfile {
        SpanProfile(
            samples: stacks * 3, intervalMs: 10,
            top: (0..<stacks).map { index in
                SpanProfile.Stack(
                    count: 3, culprit: "App.work\(index)()",
                    wait: index.isMultiple(of: 2) ? "read(fd 7 → pipe 9)" : nil,
                    frames: (0..<frames).map { "App.frame\(index)_\($0)(label:)" })
            },
            open: ["db.query"])
    }

    @Test func theOwnerTakesItsOwnSpansProfileOnceAndTheSamplerFreesTheSlot() throws {
        let slots = try #require(ProfileSlots.make(directory: nil, slotCount: 2, clock: ManualClock()))
        let ref = try #require(slots.claim(name: "api.get", startNanos: 100, budgetNanos: 5, startWallNanos: 7, tid: 1))
        let written = profile(stacks: 2, frames: 3)
        #expect(slots.write(ref, written))
        #expect(slots.take(ref, startNanos: 99) == nil, "another span's start: not its profile")
        #expect(slots.take(ref, startNanos: 100) == written)
        #expect(slots.take(ref, startNanos: 100) == nil, "taken once")
        #expect(!slots.write(ref, written), "a taken slot is not written again")
        #expect(slots.isTaken(ref))
        #expect(slots.release(ref, abandoned: false))
        // Both slots claimable again, then a third claim finds none and is counted.
        #expect(slots.claim(name: "a", startNanos: 1, budgetNanos: 0, startWallNanos: 0, tid: 1) != nil)
        #expect(slots.claim(name: "b", startNanos: 2, budgetNanos: 0, startWallNanos: 0, tid: 1) != nil)
        #expect(slots.claim(name: "c", startNanos: 3, budgetNanos: 0, startWallNanos: 0, tid: 1) == nil)
        #expect(slots.dropped == 1)
    }

    @Test(arguments: [false, true])
    func theSlotsTextIsTheLinesEncodingByteForByte(full: Bool) throws {
        var written = profile(stacks: full ? 9 : 1, frames: full ? 4 : 0)
        written.capped = full
        written.suspended = full ? 2 : 0
        if !full { written.open = [] }
        written.top[0].culprit = full ? "App.\"quoted\"\u{1}" : nil
        guard case .object(let object) = written.ledgerValue else { throw CancellationError() }
        var expected: [UInt8] = []
        LedgerEncoder.appendObject(object, into: &expected)
        #expect(written.jsonBytes == expected)
        #expect(written.jsonBytes.withUnsafeBufferPointer { SpanProfile(jsonBytes: $0) } == written)
    }

    @Test func aLiveSlotIsFreedOnlyWhenAbandoned() throws {
        let slots = try #require(ProfileSlots.make(directory: nil, slotCount: 1, clock: ManualClock()))
        let ref = try #require(slots.claim(name: "x", startNanos: 1, budgetNanos: 0, startWallNanos: 0, tid: 1))
        #expect(!slots.release(ref, abandoned: false), "its owner may still take it")
        #expect(slots.release(ref, abandoned: true))
        #expect(slots.take(ref, startNanos: 1) == nil)
    }

    @Test func aProfileLongerThanASlotKeepsItsCountsAndLosesFrames() throws {
        let long = profile(stacks: 9, frames: 400)
        let bytes = ProfileSlots.fitting(long)
        #expect(bytes.count <= ProfileSlots.textCapacity)
        let read = try #require(bytes.withUnsafeBufferPointer { SpanProfile(jsonBytes: $0) })
        #expect(read.samples == long.samples && read.top.map(\.count) == long.top.map(\.count))
        #expect(read.top.map(\.culprit) == long.top.map(\.culprit))
        #expect(read.top.allSatisfy { $0.frames.count < 400 })
    }

    @Test func recoveryReadsALiveFileAndSurvivesAnyBytes() throws {
        let directory = try TemporaryDirectory("profile-slots")
        defer { directory.remove() }
        let slots = try #require(ProfileSlots.make(directory: directory.url.path, slotCount: 4, clock: ManualClock()))
        let first = try #require(slots.claim(name: "a", startNanos: 5, budgetNanos: 20, startWallNanos: 50, tid: 3))
        let second = try #require(slots.claim(name: "b", startNanos: 6, budgetNanos: 20, startWallNanos: 60, tid: 4))
        let written = profile(stacks: 3, frames: 5)
        slots.write(first, written)
        slots.write(second, written)
        _ = slots.take(second, startNanos: 6)
        let path = directory.url.appendingPathComponent(ProfileSlots.fileName).path
        let recovered = try #require(ProfileSlots.recover(path: path))
        #expect(recovered.open.map(\.name) == ["a"], "a taken slot's span ended")
        #expect(recovered.open.first?.profile == written)
        #expect(recovered.open.first?.budgetNanos == 20 && recovered.open.first?.startWallNanos == 50)
        // Seeded mutations of the real file, and cut-short copies: never a crash.
        let seed = SeededRandom.makeSeed()
        var random = SeededRandom(seed: seed)
        let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        for round in 0..<400 {
            var bytes = original
            let start = ProfileSlots.headerBytes + Int(random.next() % UInt64(2 * ProfileSlots.slotBytes))
            for _ in 0..<Int(random.next() % 64 + 1) {
                let index = round.isMultiple(of: 4) ? Int(random.next() % 128) : start + Int(random.next() % 512)
                if index < bytes.count { bytes[index] = UInt8(truncatingIfNeeded: random.next()) }
            }
            if round.isMultiple(of: 7) { bytes = Array(bytes.prefix(Int(random.next() % UInt64(bytes.count)))) }
            let result = ProfileSlots.recover(bytes)
            for span in result?.open ?? [] {
                #expect(span.name.utf8.count <= ProfileSlots.nameCapacity, "seed \(seed)")
            }
        }
    }
}
