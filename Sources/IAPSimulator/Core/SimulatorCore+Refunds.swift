import Foundation
import IAPCatalog
import IAPSignedData

extension SimulatorCore {
    // MARK: - Refunds and revocations

    /// Refunds a transaction in full or in part (`percentage` in milli-percent, 100000 = all) as Apple does after a
    /// customer's request: the transaction is revoked, a subscription's current period ends, family copies go too.
    mutating func refund(_ id: String, percentage: Int?, reason: RevocationReason) throws(SimulatorError) {
        let t = try transaction(id)
        guard t.ownership == .purchased else {
            throw SimulatorError(.invalidState, "transaction \(id) is family-shared; refund the purchaser's")
        }
        guard t.revocation == nil else { throw SimulatorError(.invalidState, "transaction \(id) is already revoked") }
        if let percentage, !(1...100_000).contains(percentage) {
            throw SimulatorError(.invalidArgument, "a prorated refund's percentage is 1...100000 (milli-percent)")
        }
        let prorated = percentage.map { $0 < 100_000 } ?? false
        let revocation = TransactionRevocation(
            date: now, reason: reason, type: prorated ? .refundProrated : .refundFull,
            percentage: prorated ? percentage : nil)
        change(t.id) {
            $0.revocation = revocation
        }
        var line: Int?
        if let group = t.groupID, let number = lineNumber(account: t.accountID, group: group),
            lines[number].latestTransactionID == t.id
        {
            line = number
            lines[number].status = .revoked
            lines[number].autoRenew = false
            reschedule(number)
        }
        refundRequests[t.id] = nil
        log(
            .refunded, account: t.accountID, product: t.productID, transaction: t.id,
            "Apple refunds \(prorated ? "part of " : "")\(t.productID) (transaction \(t.id)) to \(t.accountID)")
        notify(.refund, nil, transaction: t.id, line: line)
        for copy in sharedCopies(of: t.id) where transactions[copy]?.revocation == nil {
            revokeCopy(copy, reason: reason)
        }
    }

    /// Apple reverses a refund it granted (after a dispute with the customer's bank, say): the transaction is no
    /// longer revoked, a subscription period that has not ended grants again (auto-renew stays off, as the refund
    /// left it), and the family copies the refund revoked come back. The developer gets REFUND_REVERSED.
    mutating func reverseRefund(_ id: String) throws(SimulatorError) {
        let t = try transaction(id)
        guard let revocation = t.revocation, revocation.type == .refundFull || revocation.type == .refundProrated
        else {
            throw SimulatorError(.invalidState, "transaction \(id) has no refund to reverse")
        }
        change(t.id) { $0.revocation = nil }
        var line: Int?
        if let group = t.groupID, let number = lineNumber(account: t.accountID, group: group),
            lines[number].latestTransactionID == t.id, case .revoked = lines[number].status
        {
            line = number
            lines[number].status = lines[number].expiresDate > now ? .active : .expired(.customerCancelled)
            reschedule(number)
        }
        log(
            .refundReversed, account: t.accountID, product: t.productID, transaction: t.id,
            "Apple reverses the refund of \(t.productID) (transaction \(t.id)); \(t.accountID) has it again")
        notify(.refundReversed, nil, transaction: t.id, line: line)
        for copy in sharedCopies(of: t.id) {
            guard let shared = transactions[copy], shared.revocation?.type == .familyRevoke,
                shared.revocation?.date == revocation.date
            else { continue }
            change(copy) { $0.revocation = nil }
            notify(.refundReversed, nil, transaction: copy, line: nil)
        }
    }

    /// A customer asks Apple for a refund: Apple asks the developer for consumption information (CONSUMPTION_REQUEST)
    /// and waits for ``decideRefund(_:grant:percentage:)``.
    mutating func requestRefund(_ id: String, reason: ConsumptionRequestReason) throws(SimulatorError) {
        try checkInjectedFailure(.refundRequest)
        let t = try transaction(id)
        guard refundRequests[t.id] == nil else {
            throw SimulatorError(.duplicateRefundRequest, "a refund of transaction \(id) was already requested")
        }
        guard t.ownership == .purchased, t.revocation == nil else {
            throw SimulatorError(.invalidState, "transaction \(id) cannot be refunded now")
        }
        refundRequests[t.id] = RefundRequest(transactionID: t.id, reason: reason)
        log(
            .refundRequested, account: t.accountID, product: t.productID, transaction: t.id,
            "\(t.accountID) asks Apple to refund \(t.productID) (\(reason.rawValue)); Apple asks the developer about consumption"
        )
        notify(.consumptionRequest, nil, transaction: t.id, line: nil, consumptionReason: reason)
    }

    mutating func reportConsumption(_ id: String, _ report: ConsumptionReport) throws(SimulatorError) {
        let t = try transaction(id)
        guard refundRequests[t.id] != nil else {
            throw SimulatorError(
                .invalidState, "no refund request for transaction \(id) awaits consumption information")
        }
        if let field = report.invalidField() {
            throw SimulatorError(.invalidArgument, "consumption information: '\(field)' is out of range")
        }
        refundRequests[t.id]!.report = report
        log(
            .consumptionReported, account: t.accountID, product: t.productID, transaction: t.id,
            "the developer reports consumption status \(report.consumptionStatus) for transaction \(t.id)")
    }

    mutating func decideRefund(_ id: String, grant: Bool, percentage: Int?) throws(SimulatorError) {
        let t = try transaction(id)
        guard refundRequests[t.id] != nil else {
            throw SimulatorError(.invalidState, "no refund request for transaction \(id)")
        }
        if grant {
            try refund(id, percentage: percentage, reason: .other)
        } else {
            refundRequests[t.id] = nil
            log(
                .refundDeclined, account: t.accountID, product: t.productID, transaction: t.id,
                "Apple declines the refund of \(t.productID)")
            notify(.refundDeclined, nil, transaction: t.id, line: nil)
        }
    }
}
