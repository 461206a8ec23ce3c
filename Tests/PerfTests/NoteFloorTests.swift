// The note floor's decisions and counts, on a test clock: every note is written or counted once,
// and a name writes at most one line per floor window.
import PerfCore
import Testing

@testable import Perf

@Suite struct NoteFloorTests {
    static let second: UInt64 = 1_000_000_000

    /// A storm of 10 notes a second for 95 s, the timer fired whenever it is due: one line per
    /// 30 s window (the first note, then the count at each window's end), and the notes written
    /// plus the counts are the notes sent.
    @Test func aStormThatGoesOnWritesOneLinePerWindowAndLosesNoCount() {
        let timer = ManualExpiryTimer()
        let floor = NoteFloor(floorSeconds: 30, timer: timer)
        let start = 5 * Self.second
        var written = 0
        var counted = 0
        var lineTimes: [UInt64] = []
        for step in 0..<950 {
            let now = start + UInt64(step) * Self.second / 10
            if let deadline = timer.armedDeadline, deadline <= now {
                let ended = floor.takeEnded(nowNanos: now)
                counted += ended.reduce(0) { $0 + $1.count }
                if !ended.isEmpty { lineTimes.append(now) }
            }
            if case .write(let carried) = floor.decide(name: "socket.reconnect", nowNanos: now) {
                written += 1
                counted += carried
                lineTimes.append(now)
            }
        }
        counted += floor.takeAll().reduce(0) { $0 + $1.count }
        #expect(written == 1)
        #expect(written + counted == 950)
        #expect(lineTimes == [start, start + 30 * Self.second, start + 60 * Self.second, start + 90 * Self.second])
    }

    /// A note past the window's end carries the count itself; the timer then finds nothing to
    /// write, and nothing is counted twice.
    @Test func aNoteBeforeTheTimerCarriesTheCountAndTheTimerWritesNothing() {
        let timer = ManualExpiryTimer()
        let floor = NoteFloor(floorSeconds: 30, timer: timer)
        #expect(floor.decide(name: "a", nowNanos: Self.second) == .write(suppressedBefore: 0))
        #expect(timer.armedDeadline == nil, "nothing held back yet")
        #expect(floor.decide(name: "a", nowNanos: 2 * Self.second) == .suppress)
        #expect(floor.decide(name: "b", nowNanos: 3 * Self.second) == .write(suppressedBefore: 0))
        #expect(floor.decide(name: "b", nowNanos: 4 * Self.second) == .suppress)
        #expect(timer.armedDeadline == 31 * Self.second, "the earliest window's end")
        #expect(floor.decide(name: "a", nowNanos: 31 * Self.second) == .write(suppressedBefore: 1))
        #expect(floor.takeEnded(nowNanos: 31 * Self.second).isEmpty, "b's window is still open")
        #expect(timer.armedDeadline == 33 * Self.second)
        #expect(floor.takeEnded(nowNanos: 33 * Self.second) == [.init(name: "b", count: 1)])
        #expect(timer.armedDeadline == nil)
        #expect(floor.takeAll().isEmpty)
    }

    /// Shutdown takes the counts of windows still open, and disarms the timer.
    @Test func shutdownTakesWhatIsStillHeld() {
        let timer = ManualExpiryTimer()
        let floor = NoteFloor(floorSeconds: 30, timer: timer)
        for step in 0..<500 { _ = floor.decide(name: "db.error", nowNanos: Self.second + UInt64(step)) }
        #expect(floor.takeAll() == [.init(name: "db.error", count: 499)])
        #expect(timer.armedDeadline == nil)
        #expect(floor.takeAll().isEmpty, "taken once")
    }

    /// A floor of 0 holds nothing back.
    @Test func aFloorOfZeroWritesEveryNote() {
        let floor = NoteFloor(floorSeconds: 0, timer: ManualExpiryTimer())
        for _ in 0..<3 { #expect(floor.decide(name: "a", nowNanos: Self.second) == .write(suppressedBefore: 0)) }
        #expect(floor.takeAll().isEmpty)
    }
}
