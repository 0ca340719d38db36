import IAPServer
import Testing

/// The sender keeps behind requests while they come fast, and goes at full speed otherwise (time is an input).
struct DeliveryPacerTests {
    let start = ContinuousClock.now

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    @Test func belowTheBusyRateDeliveriesGoAtFullSpeed() {
        var pacer = DeliveryPacer(settings: DeliverySettings(), requests: 0, now: start)
        // 200 requests a second: not busy, however long the rounds take.
        for step in 1...8 {
            #expect(pacer.allowance(requests: step * 50, now: start + .milliseconds(250 * step), limit: 64) == 64)
            pacer.spent(.milliseconds(250))
        }
    }

    @Test func whileBusyTheSendersRoundsTakeAShareOfTheTime() {
        var settings = DeliverySettings()
        settings.busyRequests = 1_000
        settings.busyShare = 0.1
        var pacer = DeliveryPacer(settings: settings, requests: 0, now: start)
        // 4,000 requests a second for two seconds; the sender looks every 5 ms, and each round takes 20 ms.
        var now = start
        var busyRounds = 0
        var sending: Duration = .zero
        while now < start + .seconds(2) {
            let requests = Int(Self.seconds(now - start) * 4_000)
            let allowed = pacer.allowance(requests: requests, now: now, limit: 64)
            if allowed > 0 {
                if now >= start + .milliseconds(50) {
                    #expect(allowed == DeliveryPacer.busyBatch, "while busy a round carries one batch")
                    busyRounds += 1
                    sending += .milliseconds(20)
                }
                pacer.spent(.milliseconds(20))
                now += .milliseconds(20)
            } else {
                now += .milliseconds(5)
            }
        }
        // A tenth of the busy time in rounds (one more for the time saved before the load was seen).
        #expect(busyRounds > 0)
        let share = Self.seconds(sending) / 1.95
        #expect(share <= 0.1 + 0.07 / 1.95)
        #expect(share >= 0.1 - 0.04 / 1.95)
        // The load stops: after a quiet quarter second the sender goes at full speed again.
        let total = 8_000
        _ = pacer.allowance(requests: total, now: now + .milliseconds(300), limit: 64)
        #expect(pacer.allowance(requests: total, now: now + .milliseconds(600), limit: 64) == 64)
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
/// sleeps instead of spinning). The bounds tell the nudge from the 300 s timer, not a speed: on a loaded machine a
/// woken task has waited 30 s for a thread.
struct OutboxSignalTests {
    @Test func afterANudgeTheNextWaitsLastUntilTheirTimers() async {
        let signal = OutboxSignal()
        signal.nudge()
        let clock = ContinuousClock()
        let first = await clock.measure { await signal.wait(upTo: .seconds(300)) }
        #expect(first < .seconds(150), "the nudge given before the wait ends it")
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
        let took = await clock.measure { await signal.wait(upTo: .seconds(300)) }
        await nudged
        #expect(took < .seconds(150))
    }

    @Test func cancellingAWaitEndsIt() async {
        let signal = OutboxSignal()
        let waiting = Task { await signal.wait(upTo: .seconds(300)) }
        try? await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        let clock = ContinuousClock()
        let took = await clock.measure { await waiting.value }
        #expect(took < .seconds(150))
    }
}
