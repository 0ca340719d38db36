import IAPServer
import Testing

/// The sender keeps behind requests while they come fast, and goes at full speed otherwise (time is an input).
struct DeliveryPacerTests {
    let start = ContinuousClock.now

    @Test func belowTheBusyRateDeliveriesGoAtFullSpeed() {
        var pacer = DeliveryPacer(settings: DeliverySettings(), requests: 0, now: start)
        // 200 requests a second: not busy.
        for step in 1...8 {
            #expect(pacer.allowance(requests: step * 50, now: start + .milliseconds(250 * step), limit: 64) == 64)
            pacer.spent(64)
        }
    }

    @Test func whileBusyDeliveriesAreAShareOfTheRequestsAnswered() {
        var settings = DeliverySettings()
        settings.busyRequests = 1_000
        settings.busyShare = 0.1
        var pacer = DeliveryPacer(settings: settings, requests: 0, now: start)
        // 4,000 requests a second for two seconds, the sender taking all it is allowed each time.
        var delivered = 0
        var rounds: [Int] = []
        for step in 1...80 {
            let allowed = pacer.allowance(requests: step * 100, now: start + .milliseconds(25 * step), limit: 64)
            pacer.spent(allowed)
            delivered += allowed
            if step > 10, allowed > 0 { rounds.append(allowed) }
        }
        // The first 50 ms count as idle (no rate yet); after them, ten deliveries per hundred requests, in rounds big
        // enough to be worth their writes.
        let busyRequests = 8_000 - 200
        #expect(delivered <= 64 * 2 + busyRequests / 10 + 1)
        #expect(delivered >= busyRequests / 10 - DeliveryPacer.busyBatch)
        #expect(!rounds.isEmpty && rounds.allSatisfy { $0 >= DeliveryPacer.busyBatch })
        // The load stops: after a quiet quarter second the sender goes at full speed again.
        _ = pacer.allowance(requests: 8_000, now: start + .milliseconds(2_000 + 300), limit: 64)
        #expect(pacer.allowance(requests: 8_000, now: start + .milliseconds(2_000 + 600), limit: 64) == 64)
    }

    @Test func zeroBusyRequestsNeverHoldsBack() {
        var settings = DeliverySettings()
        settings.busyRequests = 0
        var pacer = DeliveryPacer(settings: settings, requests: 0, now: start)
        for step in 1...8 {
            #expect(pacer.allowance(requests: step * 10_000, now: start + .milliseconds(250 * step), limit: 64) == 64)
        }
    }
}

/// The sender's wake-ups: a nudge ends a wait, and nothing else is remembered for the next one (so an idle sender
/// sleeps instead of spinning).
struct OutboxSignalTests {
    @Test func afterANudgeTheNextWaitsLastUntilTheirTimers() async {
        let signal = OutboxSignal()
        signal.nudge()
        let clock = ContinuousClock()
        let first = await clock.measure { await signal.wait(upTo: .seconds(60)) }
        #expect(first < .seconds(30), "the nudge given before the wait ends it")
        for _ in 0..<3 {
            let took = await clock.measure { await signal.wait(upTo: .milliseconds(100)) }
            #expect(took >= .milliseconds(100), "no nudge came: the timer ends the wait")
        }
    }

    @Test func aNudgeDuringAWaitEndsIt() async {
        let signal = OutboxSignal()
        let clock = ContinuousClock()
        async let nudged: Void = {
            try? await Task.sleep(for: .milliseconds(50))
            signal.nudge()
        }()
        let took = await clock.measure { await signal.wait(upTo: .seconds(60)) }
        await nudged
        #expect(took < .seconds(30))
    }

    @Test func cancellingAWaitEndsIt() async {
        let signal = OutboxSignal()
        let waiting = Task { await signal.wait(upTo: .seconds(60)) }
        try? await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        let clock = ContinuousClock()
        let took = await clock.measure { await waiting.value }
        #expect(took < .seconds(30))
    }
}
