#!/usr/bin/env python3
"""Cross-check: Apple's own App Store Server API client (app-store-server-library on PyPI) against `iapkit serve`.

Calls every endpoint of AppStoreServerAPIClient that the formats reference's section 5 lists, with the base URL
pointed at the server, verifies every signed document in the answers with the library's SignedDataVerifier against
the simulator's root, and prints one JSON object per call: {"call": NAME, "ok": true, ...facts} or
{"call": NAME, "ok": false, "error": ..., "apiError": CODE}. Exits 2 if the library is missing.

Usage: apple-server-api-client.py --base-url URL --key P8 --key-id ID --issuer-id ID --bundle-id ID --root DER
       --subscription ORIGINAL_ID --purchase ID --consumable ID --consumable-v1 ID --finish ID --product ID
       --order ORDER_ID
"""
import argparse
import json
import sys
import time
import uuid

try:
    from appstoreserverlibrary.api_client import AppStoreServerAPIClient, APIException, GetTransactionHistoryVersion
    from appstoreserverlibrary.models.ConsumptionRequest import ConsumptionRequest
    from appstoreserverlibrary.models.AccountTenure import AccountTenure
    from appstoreserverlibrary.models.ConsumptionRequestV1 import ConsumptionRequestV1
    from appstoreserverlibrary.models.ConsumptionStatus import ConsumptionStatus
    from appstoreserverlibrary.models.DeliveryStatusV1 import DeliveryStatusV1
    from appstoreserverlibrary.models.LifetimeDollarsPurchased import LifetimeDollarsPurchased
    from appstoreserverlibrary.models.LifetimeDollarsRefunded import LifetimeDollarsRefunded
    from appstoreserverlibrary.models.Platform import Platform
    from appstoreserverlibrary.models.PlayTime import PlayTime
    from appstoreserverlibrary.models.RefundPreferenceV1 import RefundPreferenceV1
    from appstoreserverlibrary.models.UserStatus import UserStatus
    from appstoreserverlibrary.models.DeliveryStatus import DeliveryStatus
    from appstoreserverlibrary.models.Environment import Environment
    from appstoreserverlibrary.models.ExtendReasonCode import ExtendReasonCode
    from appstoreserverlibrary.models.ExtendRenewalDateRequest import ExtendRenewalDateRequest
    from appstoreserverlibrary.models.MassExtendRenewalDateRequest import MassExtendRenewalDateRequest
    from appstoreserverlibrary.models.NotificationHistoryRequest import NotificationHistoryRequest
    from appstoreserverlibrary.models.TransactionHistoryRequest import TransactionHistoryRequest, Order
    from appstoreserverlibrary.models.UpdateAppAccountTokenRequest import UpdateAppAccountTokenRequest
    from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier
except ImportError:
    print("app-store-server-library is not installed (pip install app-store-server-library)", file=sys.stderr)
    sys.exit(2)


def main() -> int:
    parser = argparse.ArgumentParser()
    for name in ["base-url", "key", "key-id", "issuer-id", "bundle-id", "root", "subscription", "purchase",
                 "consumable", "consumable-v1", "finish", "product", "order"]:
        parser.add_argument("--" + name, required=True)
    args = parser.parse_args()

    client = AppStoreServerAPIClient(
        open(args.key, "rb").read(), args.key_id, args.issuer_id, args.bundle_id, Environment.SANDBOX)
    client._base_url = args.base_url  # the attribute the library builds every URL from
    verifier = SignedDataVerifier([open(args.root, "rb").read()], False, Environment.SANDBOX, args.bundle_id)
    transaction = verifier.verify_and_decode_signed_transaction
    failures = 0

    def call(name, body):
        nonlocal failures
        try:
            facts = body() or {}
            print(json.dumps({"call": name, "ok": True, **facts}, default=str), flush=True)
        except APIException as error:
            failures += 1
            print(json.dumps({"call": name, "ok": False, "error": str(error), "status": error.http_status_code,
                              "apiError": error.raw_api_error}), flush=True)
        except Exception as error:  # verification failures and anything unexpected
            failures += 1
            print(json.dumps({"call": name, "ok": False, "error": f"{type(error).__name__}: {error}"}), flush=True)

    def history(version):
        ids, revision, pages = [], None, 0
        while True:
            page = client.get_transaction_history(
                args.purchase, revision, TransactionHistoryRequest(sort=Order.ASCENDING), version)
            ids += [transaction(jws).transactionId for jws in page.signedTransactions]
            pages += 1
            revision = page.revision
            if not page.hasMore:
                return {"transactionIds": ids, "pages": pages}

    call("transactionInfo", lambda: {
        "transactionId": transaction(client.get_transaction_info(args.purchase).signedTransactionInfo).transactionId})
    call("historyV1", lambda: history(GetTransactionHistoryVersion.V1))
    call("historyV2", lambda: history(GetTransactionHistoryVersion.V2))

    def statuses():
        answer = client.get_all_subscription_statuses(args.purchase)
        items = []
        for group in answer.data:
            for last in group.lastTransactions:
                signed = transaction(last.signedTransactionInfo)
                renewal = verifier.verify_and_decode_renewal_info(last.signedRenewalInfo)
                items.append({"group": group.subscriptionGroupIdentifier, "status": last.rawStatus,
                              "originalTransactionId": last.originalTransactionId, "productId": signed.productId,
                              "autoRenewProductId": renewal.autoRenewProductId})
        return {"subscriptions": items}
    call("subscriptionStatuses", statuses)

    def refunds():
        ids, revision = [], None
        while True:
            page = client.get_refund_history(args.purchase, revision)
            ids += [transaction(jws).transactionId for jws in page.signedTransactions]
            revision = page.revision
            if not page.hasMore:
                return {"transactionIds": ids}
    call("refundHistory", refunds)

    def order():
        answer = client.look_up_order_id(args.order)
        return {"status": answer.rawStatus,
                "transactionIds": [transaction(jws).transactionId for jws in answer.signedTransactions or []]}
    call("orderLookup", order)

    def extend():
        answer = client.extend_subscription_renewal_date(args.subscription, ExtendRenewalDateRequest(
            extendByDays=7, extendReasonCode=ExtendReasonCode.SERVICE_ISSUE_OR_OUTAGE, requestIdentifier="py-1"))
        return {"success": answer.success, "effectiveDate": answer.effectiveDate,
                "originalTransactionId": answer.originalTransactionId}
    call("extendRenewalDate", extend)

    def mass():
        identifier = client.extend_renewal_date_for_all_active_subscribers(MassExtendRenewalDateRequest(
            extendByDays=3, extendReasonCode=ExtendReasonCode.CUSTOMER_SATISFACTION, requestIdentifier="py-mass",
            productId=args.product, storefrontCountryCodes=["USA"])).requestIdentifier
        status = client.get_status_of_subscription_renewal_date_extensions(identifier, args.product)
        return {"requestIdentifier": identifier, "complete": status.complete,
                "succeededCount": status.succeededCount, "failedCount": status.failedCount}
    call("massExtension", mass)

    call("consumptionInformation", lambda: client.send_consumption_information(args.consumable, ConsumptionRequest(
        customerConsented=True, sampleContentProvided=False, deliveryStatus=DeliveryStatus.DELIVERED,
        consumptionPercentage=50000)))
    call("consumptionDataV1", lambda: client.send_consumption_data(args.consumable_v1, ConsumptionRequestV1(
        customerConsented=True, consumptionStatus=ConsumptionStatus(2), platform=Platform(1),
        sampleContentProvided=False, deliveryStatus=DeliveryStatusV1(0), appAccountToken="",
        accountTenure=AccountTenure(1), playTime=PlayTime(1), lifetimeDollarsRefunded=LifetimeDollarsRefunded(0),
        lifetimeDollarsPurchased=LifetimeDollarsPurchased(1), userStatus=UserStatus(1),
        refundPreference=RefundPreferenceV1(3))))

    token = str(uuid.UUID("11111111-2222-4333-8444-555555555555"))
    def app_account_token():
        client.set_app_account_token(args.subscription, UpdateAppAccountTokenRequest(appAccountToken=token))
        signed = transaction(client.get_transaction_info(args.subscription).signedTransactionInfo)
        return {"appAccountToken": signed.appAccountToken}
    call("setAppAccountToken", app_account_token)

    def app_transaction():
        signed = client.get_app_transaction_info(args.purchase).signedAppTransactionInfo
        app = verifier.verify_and_decode_app_transaction(signed)
        return {"bundleId": app.bundleId, "appTransactionId": app.appTransactionId}
    call("appTransactionInfo", app_transaction)
    call("finishTransaction", lambda: client.finish_transaction(args.finish))

    def test_notification():
        token = client.request_test_notification().testNotificationToken
        answer = None
        for _ in range(50):  # the server applies notifications off the request path
            answer = client.get_test_notification_status(token)
            if answer.sendAttempts:
                break
            time.sleep(0.1)
        decoded = verifier.verify_and_decode_notification(answer.signedPayload)
        return {"type": decoded.rawNotificationType,
                "attempts": [attempt.rawSendAttemptResult for attempt in answer.sendAttempts or []]}
    call("testNotification", test_notification)

    def notification_history():
        now = int(time.time() * 1000)
        request = NotificationHistoryRequest(startDate=now - 86_400_000, endDate=now + 86_400_000)
        token, uuids, pages = None, [], 0
        while True:
            page = client.get_notification_history(token, request)
            uuids += [verifier.verify_and_decode_notification(item.signedPayload).notificationUUID
                      for item in page.notificationHistory]
            pages += 1
            token = page.paginationToken
            if not page.hasMore:
                return {"notificationUUIDs": uuids, "pages": pages}
    call("notificationHistory", notification_history)

    def unknown():
        try:
            client.get_transaction_info("999")
        except APIException as error:
            return {"status": error.http_status_code, "apiError": error.raw_api_error}
        raise RuntimeError("an unknown transaction id was answered")
    call("unknownTransaction", unknown)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
