import Foundation
import IAPCore
import IAPSimulator
import Testing

@testable import IAPSimulatorServer

/// The clock of a server whose local App Store does not sell: the seller's dial as its beats carry it.
@Suite("the followed clock")
struct FollowedClockTests {
    static let wallStart = Date(timeIntervalSince1970: 1_800_000_000)

    /// A note of a dial anchored at `wall`, at `simulated`, going at `speed`.
    static func note(wall: Date, simulated: Date, speed: Double = 1, paused: Bool = false) -> HolderNote {
        HolderNote(wallAnchor: wall, simulatedAnchor: simulated, speed: speed, paused: paused, authority: "abc")
    }

    @Test func aNoteSaysItsDialInTextAndBackAndRefusesWhatIsNotOne() throws {
        let note = Self.note(wall: Self.wallStart, simulated: Self.wallStart.addingTimeInterval(86_400), speed: 2.5)
        #expect(HolderNote(note.text) == note)
        for text in ["", "1 2 3 4", "1 2 0 0 abc", "1 2 -1 0 abc", "1 2 nan 0 abc", "1 2 1 2 abc", "x 2 1 0 abc"] {
            #expect(HolderNote(text) == nil, "\(text)")
        }
    }

    @Test func itFollowsTheSellersDialNeverGoesBackAndStopsAtTheLatestDate() {
        let wall = Locked(Self.wallStart)
        let clock = FollowedClock(
            start: Self.note(wall: Self.wallStart, simulated: Self.wallStart), wall: { wall.withLock { $0 } })
        #expect(clock.now == Self.wallStart)
        wall.withLock { $0 += 10 }
        #expect(clock.now == Self.wallStart.addingTimeInterval(10))
        // The seller jumped a month ahead at that moment.
        let jumped = Self.wallStart.addingTimeInterval(10 + 30 * 86_400)
        clock.follow(Self.note(wall: wall.withLock { $0 }, simulated: jumped))
        #expect(clock.now == jumped)
        // A new seller continues from a slightly older save: shown time does not go back.
        clock.follow(Self.note(wall: wall.withLock { $0 }, simulated: jumped.addingTimeInterval(-5)))
        #expect(clock.now == jumped)
        wall.withLock { $0 += 10 }
        #expect(clock.now == jumped.addingTimeInterval(5))
        // Paused: it stands still.
        clock.follow(Self.note(wall: wall.withLock { $0 }, simulated: jumped.addingTimeInterval(100), paused: true))
        wall.withLock { $0 += 1_000 }
        #expect(clock.now == jumped.addingTimeInterval(100))
        // A fast dial stops where the store's own clock stops.
        clock.follow(Self.note(wall: wall.withLock { $0 }, simulated: jumped, speed: 1_000_000))
        wall.withLock { $0 += 100_000 }
        #expect(clock.now == SimulatorConfiguration.latestDate)
    }
}
