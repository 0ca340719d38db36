#!/usr/bin/env python3
"""Cross-check: Apple's own App Store Server API client (app-store-server-library on PyPI) against `iapkit serve`.

Calls every core method of AppStoreServerAPIClient (the formats reference's section 5: transaction info, history v1
and v2 with each filter, statuses with and without a filter, refund history, order lookup, renewal extension one and
mass, consumption v1 and v2, app account token, app transaction, finish, test notification, notification history with
each filter, errors), with the base URL pointed at the server. Every signed document in the answers is verified with
the library's SignedDataVerifier against the simulator's root, and every answer is checked twice: through the library's
models (what an app sees) and as raw JSON (the models coerce silently: a string where a number belongs, an unknown enum
value, a missing key all pass them), field by field against Apple's documented types and enum values.

Prints one JSON object per call: {"call": NAME, "ok": true, ...facts} or {"call": NAME, "ok": false, "error": ...},
then {"call": "rawAnswers", "ok": ..., "problems": [...], "answers": N}. Exits 1 on any failure, 2 if the library is
missing.

Usage: apple-server-api-client.py --base-url URL --key P8 --key-id ID --issuer-id ID --bundle-id ID --root DER
       --subscription ORIGINAL_ID --purchase ID --consumable ID --consumable-v1 ID --finish ID --product ID
       --order ORDER_ID --group GROUP_ID
"""
import argparse
import base64
import json
import sys
import time
import uuid

try:
    from appstoreserverlibrary.api_client import AppStoreServerAPIClient, APIException, GetTransactionHistoryVersion
    from appstoreserverlibrary.models.AccountTenure import AccountTenure
    from appstoreserverlibrary.models.AutoRenewStatus import AutoRenewStatus
    from appstoreserverlibrary.models.ConsumptionRequest import ConsumptionRequest
    from appstoreserverlibrary.models.ConsumptionRequestV1 import ConsumptionRequestV1
    from appstoreserverlibrary.models.ConsumptionStatus import ConsumptionStatus
    from appstoreserverlibrary.models.DeliveryStatus import DeliveryStatus
    from appstoreserverlibrary.models.DeliveryStatusV1 import DeliveryStatusV1
    from appstoreserverlibrary.models.Environment import Environment
    from appstoreserverlibrary.models.ExpirationIntent import ExpirationIntent
    from appstoreserverlibrary.models.ExtendReasonCode import ExtendReasonCode
    from appstoreserverlibrary.models.ExtendRenewalDateRequest import ExtendRenewalDateRequest
    from appstoreserverlibrary.models.InAppOwnershipType import InAppOwnershipType
    from appstoreserverlibrary.models.LifetimeDollarsPurchased import LifetimeDollarsPurchased
    from appstoreserverlibrary.models.LifetimeDollarsRefunded import LifetimeDollarsRefunded
    from appstoreserverlibrary.models.MassExtendRenewalDateRequest import MassExtendRenewalDateRequest
    from appstoreserverlibrary.models.NotificationHistoryRequest import NotificationHistoryRequest
    from appstoreserverlibrary.models.NotificationTypeV2 import NotificationTypeV2
    from appstoreserverlibrary.models.OfferDiscountType import OfferDiscountType
    from appstoreserverlibrary.models.OfferType import OfferType
    from appstoreserverlibrary.models.Platform import Platform
    from appstoreserverlibrary.models.PlayTime import PlayTime
    from appstoreserverlibrary.models.PriceIncreaseStatus import PriceIncreaseStatus
    from appstoreserverlibrary.models.RefundPreferenceV1 import RefundPreferenceV1
    from appstoreserverlibrary.models.RevocationReason import RevocationReason
    from appstoreserverlibrary.models.SendAttemptResult import SendAttemptResult
    from appstoreserverlibrary.models.Status import Status
    from appstoreserverlibrary.models.Subtype import Subtype
    from appstoreserverlibrary.models.TransactionHistoryRequest import TransactionHistoryRequest, Order, ProductType
    from appstoreserverlibrary.models.TransactionReason import TransactionReason
    from appstoreserverlibrary.models.Type import Type
    from appstoreserverlibrary.models.UpdateAppAccountTokenRequest import UpdateAppAccountTokenRequest
    from appstoreserverlibrary.models.UserStatus import UserStatus
    from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier
except ImportError as missing:
    print(f"app-store-server-library is not installed (pip install app-store-server-library): {missing}",
          file=sys.stderr)
    sys.exit(2)

# Apple's documented JSON type of every field its App Store Server API answers and signed payloads carry. A field
# missing here is reported: Apple's models would drop it without a word.
INT, STR, BOOL, LIST, DICT = int, str, bool, list, dict
FIELD_TYPES = {
    # answers
    "environment": STR, "bundleId": STR, "appAppleId": INT, "hasMore": BOOL, "revision": STR,
    "signedTransactions": LIST, "signedTransactionInfo": STR, "signedRenewalInfo": STR, "signedAppTransactionInfo": STR,
    "data": (LIST, DICT), "subscriptionGroupIdentifier": STR, "lastTransactions": LIST, "status": INT,
    "originalTransactionId": STR, "webOrderLineItemId": STR, "success": BOOL, "effectiveDate": INT,
    "requestIdentifier": STR, "complete": BOOL, "completeDate": INT, "succeededCount": INT, "failedCount": INT,
    "testNotificationToken": STR, "signedPayload": STR, "sendAttempts": LIST, "attemptDate": INT,
    "sendAttemptResult": STR, "paginationToken": STR, "notificationHistory": LIST, "firstSendAttemptResult": STR,
    "errorCode": INT, "errorMessage": STR,
    # transaction and renewal info (JWSTransactionDecodedPayload, JWSRenewalInfoDecodedPayload)
    "transactionId": STR, "purchaseDate": INT, "originalPurchaseDate": INT, "expiresDate": INT, "productId": STR,
    "quantity": INT, "type": STR, "appAccountToken": STR, "inAppOwnershipType": STR, "signedDate": INT,
    "revocationReason": INT, "revocationDate": INT, "isUpgraded": BOOL, "offerType": INT, "offerIdentifier": STR,
    "storefront": STR, "storefrontId": STR, "transactionReason": STR, "currency": STR, "price": INT,
    "offerDiscountType": STR, "appTransactionId": STR, "offerPeriod": STR, "revocationType": STR,
    "revocationPercentage": INT, "expirationIntent": INT, "autoRenewProductId": STR, "autoRenewStatus": INT,
    "isInBillingRetryPeriod": BOOL, "priceIncreaseStatus": INT, "gracePeriodExpiresDate": INT,
    "recentSubscriptionStartDate": INT, "renewalDate": INT, "renewalPrice": INT, "eligibleWinBackOfferIds": LIST,
    # notifications (ResponseBodyV2DecodedPayload and its data, summary)
    "notificationType": STR, "subtype": STR, "notificationUUID": STR, "version": STR, "summary": DICT,
    "externalPurchaseToken": DICT, "bundleVersion": STR, "consumptionRequestReason": STR, "appData": DICT,
    "storefrontCountryCodes": LIST, "productIds": LIST,
    # app transaction
    "receiptType": STR, "applicationVersion": STR, "originalApplicationVersion": STR, "receiptCreationDate": INT,
    "deviceVerification": STR, "deviceVerificationNonce": STR, "preorderDate": INT, "originalPlatform": STR,
}
ENUMS = {
    "type": Type, "transactionReason": TransactionReason, "inAppOwnershipType": InAppOwnershipType,
    "environment": Environment, "offerDiscountType": OfferDiscountType, "notificationType": NotificationTypeV2,
    "subtype": Subtype, "sendAttemptResult": SendAttemptResult, "revocationReason": RevocationReason,
    "offerType": OfferType, "expirationIntent": ExpirationIntent, "autoRenewStatus": AutoRenewStatus,
    "priceIncreaseStatus": PriceIncreaseStatus,
}
# Fields whose value is a signed document, and the kind it holds.
SIGNED = {"signedTransactionInfo": "transaction", "signedTransactions": "transaction",
          "signedRenewalInfo": "renewal", "signedAppTransactionInfo": "app", "signedPayload": "notification"}


def payload_of(jws):
    part = jws.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


class RawChecks:
    """Every answer's JSON as the server sent it, checked against FIELD_TYPES and ENUMS, nested documents too."""

    def __init__(self, bundle_id):
        self.bundle_id = bundle_id
        self.problems = []
        self.answers = 0

    def answer(self, where, response):
        self.answers += 1
        if response.status_code == 204 or not response.content:
            return
        if response.headers.get("content-type") != "application/json":
            self.problems.append(f"{where}: content-type {response.headers.get('content-type')!r}")
            return
        self.check(where, response.json())

    def check(self, where, value, key=None):
        if isinstance(value, dict):
            for name, item in value.items():
                self.field(f"{where}.{name}", name, item)
        elif isinstance(value, list):
            for index, item in enumerate(value):
                self.check(f"{where}[{index}]", item, key)

    def field(self, where, name, value):
        if name not in FIELD_TYPES:
            self.problems.append(f"{where}: a field Apple does not document")
            return
        expected = FIELD_TYPES[name]
        # bool is an int in Python: a boolean where a number belongs is a disagreement too.
        if isinstance(value, bool) and expected is not BOOL or not isinstance(value, expected):
            self.problems.append(f"{where}: {type(value).__name__} {value!r:.60}, Apple's type is "
                                 f"{getattr(expected, '__name__', expected)}")
            return
        if name in ENUMS and value not in {member.value for member in ENUMS[name]}:
            self.problems.append(f"{where}: {value!r} is none of Apple's values")
        if name == "bundleId" and value != self.bundle_id:
            self.problems.append(f"{where}: {value!r}")
        if name in SIGNED:
            for index, document in enumerate(value if isinstance(value, list) else [value]):
                self.check(f"{where}<{SIGNED[name]}{index}>", payload_of(document))
        elif isinstance(value, (dict, list)) and name not in ("storefrontCountryCodes", "productIds",
                                                             "eligibleWinBackOfferIds"):
            self.check(where, value)


def main() -> int:
    parser = argparse.ArgumentParser()
    for name in ["base-url", "key", "key-id", "issuer-id", "bundle-id", "root", "subscription", "purchase",
                 "consumable", "consumable-v1", "finish", "product", "order", "group"]:
        parser.add_argument("--" + name, required=True)
    args = parser.parse_args()
    raw = RawChecks(args.bundle_id)
    current = {"call": None}

    class RecordingClient(AppStoreServerAPIClient):
        """Apple's client, unchanged but for keeping every raw answer for RawChecks."""

        def _execute_request(self, method, url, params, headers, json_body, data):
            response = super()._execute_request(method, url, params, headers, json_body, data)
            raw.answer(f"{current['call']} {method} {url[len(args.base_url):]}", response)
            return response

    client = RecordingClient(
        open(args.key, "rb").read(), args.key_id, args.issuer_id, args.bundle_id, Environment.SANDBOX)
    client._base_url = args.base_url  # the attribute the library builds every URL from
    verifier = SignedDataVerifier([open(args.root, "rb").read()], False, Environment.SANDBOX, args.bundle_id)
    transaction = verifier.verify_and_decode_signed_transaction
    failures = 0

    def call(name, body):
        nonlocal failures
        current["call"] = name
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

    def refused(body):
        """The status and API error code of a call that must be refused."""
        try:
            body()
        except APIException as error:
            return [error.http_status_code, error.raw_api_error]
        return ["answered", None]

    def history(version, request=None):
        ids, revision, pages, reasons, types = [], None, 0, {}, {}
        while True:
            page = client.get_transaction_history(
                args.purchase, revision, request or TransactionHistoryRequest(sort=Order.ASCENDING), version)
            for jws in page.signedTransactions:
                decoded = transaction(jws)
                ids.append(decoded.transactionId)
                reasons[decoded.transactionId] = decoded.rawTransactionReason
                types[decoded.transactionId] = decoded.rawType
            pages += 1
            revision = page.revision
            if not page.hasMore:
                return {"transactionIds": ids, "pages": pages, "reasons": reasons, "types": types}

    call("transactionInfo", lambda: {
        "transactionId": transaction(client.get_transaction_info(args.purchase).signedTransactionInfo).transactionId})
    call("historyV1", lambda: history(GetTransactionHistoryVersion.V1))
    call("historyV2", lambda: history(GetTransactionHistoryVersion.V2))

    def filtered():
        v2 = GetTransactionHistoryVersion.V2
        ids = lambda **fields: history(v2, TransactionHistoryRequest(sort=Order.ASCENDING, **fields))["transactionIds"]
        window = payload_of(client.get_transaction_info(args.purchase).signedTransactionInfo)["purchaseDate"]
        return {
            "productType": {kind.value: ids(productTypes=[kind]) for kind in ProductType},
            "productTypes": ids(productTypes=[ProductType.CONSUMABLE, ProductType.NON_CONSUMABLE]),
            "productId": ids(productIds=[args.product]),
            "subscriptionGroupIdentifier": ids(subscriptionGroupIdentifiers=[args.group]),
            "familyShared": ids(inAppOwnershipType=InAppOwnershipType.FAMILY_SHARED),
            "purchased": ids(inAppOwnershipType=InAppOwnershipType.PURCHASED),
            "revoked": ids(revoked=True),
            "notRevoked": ids(revoked=False),
            "window": ids(startDate=window, endDate=window + 1),
            "descending": history(v2, TransactionHistoryRequest(sort=Order.DESCENDING))["transactionIds"],
            "badProductType": refused(lambda: client._make_request(
                f"/inApps/v2/history/{args.purchase}", "GET", {"productType": ["SUBSCRIPTION"]}, None, None)),
            "badRevision": refused(lambda: client.get_transaction_history(
                args.purchase, "p999", TransactionHistoryRequest(), v2)),
        }
    call("historyFilters", filtered)

    def statuses(status=None):
        answer = client.get_all_subscription_statuses(args.purchase, status)
        items = []
        for group in answer.data:
            for last in group.lastTransactions:
                signed = transaction(last.signedTransactionInfo)
                renewal = verifier.verify_and_decode_renewal_info(last.signedRenewalInfo)
                items.append({"group": group.subscriptionGroupIdentifier, "status": last.rawStatus,
                              "originalTransactionId": last.originalTransactionId, "productId": signed.productId,
                              "autoRenewProductId": renewal.autoRenewProductId, "expiresDate": signed.expiresDate,
                              "renewalDate": renewal.renewalDate})
        return {"subscriptions": items}
    call("subscriptionStatuses", statuses)
    call("subscriptionStatusesActive", lambda: statuses([Status.ACTIVE]))
    call("subscriptionStatusesExpired", lambda: statuses([Status.EXPIRED]))

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
        unknown = client.look_up_order_id("NOSUCHORDER1")
        return {"status": answer.rawStatus,
                "transactionIds": [transaction(jws).transactionId for jws in answer.signedTransactions or []],
                "unknownStatus": unknown.rawStatus}
    call("orderLookup", order)

    def extend():
        request = ExtendRenewalDateRequest(
            extendByDays=7, extendReasonCode=ExtendReasonCode.SERVICE_ISSUE_OR_OUTAGE, requestIdentifier="py-1")
        answer = client.extend_subscription_renewal_date(args.subscription, request)
        signed = payload_of(client.get_transaction_info(args.subscription).signedTransactionInfo)
        latest = statuses()["subscriptions"][0]
        again = client.extend_subscription_renewal_date(args.subscription, request)
        after = statuses()["subscriptions"][0]
        return {"success": answer.success, "effectiveDate": answer.effectiveDate,
                "originalTransactionId": answer.originalTransactionId,
                "webOrderLineItemId": answer.webOrderLineItemId,
                "latestExpiresDate": latest["expiresDate"], "renewalDate": latest["renewalDate"],
                "repeatedEffectiveDate": again.effectiveDate, "expiresDateAfterRepeat": after["expiresDate"],
                "transactionInfoWebOrderLineItemId": signed.get("webOrderLineItemId"),
                "tooManyDays": refused(lambda: client.extend_subscription_renewal_date(
                    args.subscription, ExtendRenewalDateRequest(
                        extendByDays=91, extendReasonCode=ExtendReasonCode.CUSTOMER_SATISFACTION,
                        requestIdentifier="py-2")))}
    call("extendRenewalDate", extend)

    def mass():
        identifier = client.extend_renewal_date_for_all_active_subscribers(MassExtendRenewalDateRequest(
            extendByDays=3, extendReasonCode=ExtendReasonCode.CUSTOMER_SATISFACTION, requestIdentifier="py-mass",
            productId=args.product, storefrontCountryCodes=["USA"])).requestIdentifier
        status = client.get_status_of_subscription_renewal_date_extensions(identifier, args.product)
        elsewhere = client.extend_renewal_date_for_all_active_subscribers(MassExtendRenewalDateRequest(
            extendByDays=3, extendReasonCode=ExtendReasonCode.CUSTOMER_SATISFACTION, requestIdentifier="py-mass-fra",
            productId=args.product, storefrontCountryCodes=["FRA"])).requestIdentifier
        other = client.get_status_of_subscription_renewal_date_extensions(elsewhere, args.product)
        return {"requestIdentifier": identifier, "complete": status.complete, "completeDate": status.completeDate,
                "succeededCount": status.succeededCount, "failedCount": status.failedCount,
                "otherStorefrontSucceeded": other.succeededCount,
                "unknownRequest": refused(lambda: client.get_status_of_subscription_renewal_date_extensions(
                    "no-such-request", args.product))}
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
        return {"appAccountToken": signed.appAccountToken,
                "badToken": refused(lambda: client.set_app_account_token(
                    args.subscription, UpdateAppAccountTokenRequest(appAccountToken="not-a-uuid")))}
    call("setAppAccountToken", app_account_token)

    def app_transaction():
        signed = client.get_app_transaction_info(args.purchase).signedAppTransactionInfo
        app = verifier.verify_and_decode_app_transaction(signed)
        return {"bundleId": app.bundleId, "appTransactionId": app.appTransactionId}
    call("appTransactionInfo", app_transaction)
    call("finishTransaction", lambda: client.finish_transaction(args.finish))
    call("historyV1AfterFinish", lambda: history(GetTransactionHistoryVersion.V1))

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
                "attempts": [attempt.rawSendAttemptResult for attempt in answer.sendAttempts or []],
                "badToken": refused(lambda: client.get_test_notification_status("not a token"))}
    call("testNotification", test_notification)

    def notification_history(**filters):
        now = int(time.time() * 1000)
        request = NotificationHistoryRequest(startDate=now - 86_400_000, endDate=now + 86_400_000 * 60, **filters)
        token, uuids, types, pages = None, [], [], 0
        while True:
            page = client.get_notification_history(token, request)
            for item in page.notificationHistory:
                decoded = verifier.verify_and_decode_notification(item.signedPayload)
                uuids.append(decoded.notificationUUID)
                types.append(decoded.rawNotificationType)
            pages += 1
            token = page.paginationToken
            if not page.hasMore:
                return {"notificationUUIDs": uuids, "types": types, "pages": pages}
    call("notificationHistory", notification_history)
    call("notificationHistoryTest", lambda: notification_history(notificationType=NotificationTypeV2.TEST))
    call("notificationHistoryTransaction", lambda: notification_history(transactionId=args.subscription))
    call("notificationHistoryFailures", lambda: notification_history(onlyFailures=True))

    def unknown():
        return {"transaction": refused(lambda: client.get_transaction_info("999")),
                "malformedTransaction": refused(lambda: client.get_transaction_info("abc"))}
    call("errors", unknown)

    problems = raw.problems
    print(json.dumps({"call": "rawAnswers", "ok": not problems, "answers": raw.answers, "problems": problems[:50]}),
          flush=True)
    return 1 if failures or problems else 0


if __name__ == "__main__":
    sys.exit(main())
