#!/usr/bin/env python3
"""Cross-check: Apple's own App Store Server API client (app-store-server-library on PyPI) against `iapkit serve`.

Calls every core method of AppStoreServerAPIClient (the formats reference's section 5: transaction info, history v1
and v2 with each filter, statuses with and without a filter, refund history, order lookup, renewal extension one and
mass, consumption v1 and v2, app account token, app transaction, finish, test notification, notification history with
each filter, errors) and every Retention Messaging method (images, messages, default messages, the realtime URL and
a performance test against a realtime endpoint this script serves on loopback, which verifies every signed request
with the library's SignedDataVerifier), with the base URL pointed at the server. Every signed document in the answers is verified with
the library's SignedDataVerifier against the simulator's root, and every answer is checked twice: through the library's
models (what an app sees) and as raw JSON (the models coerce silently: a string where a number belongs, an unknown enum
value, a missing key all pass them), field by field against Apple's documented types and enum values.

Prints one JSON object per call: {"call": NAME, "ok": true, ...facts} or {"call": NAME, "ok": false, "error": ...},
then {"call": "rawAnswers", "ok": ..., "problems": [...], "answers": N}. Exits 1 on any failure, 2 if the library is
missing.

Usage: apple-server-api-client.py --base-url URL --key P8 --key-id ID --issuer-id ID --bundle-id ID --root DER
       --subscription ORIGINAL_ID --purchase ID --consumable ID --consumable-v1 ID --finish ID --product ID
       --order ORDER_ID --group GROUP_ID --purchase-product ID
"""
import argparse
import base64
import json
import struct
import sys
import threading
import time
import uuid
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

try:
    from appstoreserverlibrary.api_client import AppStoreServerAPIClient, APIException, GetTransactionHistoryVersion
    from appstoreserverlibrary.models.AccountTenure import AccountTenure
    from appstoreserverlibrary.models.AutoRenewStatus import AutoRenewStatus
    from appstoreserverlibrary.models.BulletPoint import BulletPoint
    from appstoreserverlibrary.models.DefaultConfigurationRequest import DefaultConfigurationRequest
    from appstoreserverlibrary.models.HeaderPosition import HeaderPosition
    from appstoreserverlibrary.models.ImageSize import ImageSize
    from appstoreserverlibrary.models.ImageState import ImageState
    from appstoreserverlibrary.models.MessageState import MessageState
    from appstoreserverlibrary.models.PerformanceTestRequest import PerformanceTestRequest
    from appstoreserverlibrary.models.PerformanceTestStatus import PerformanceTestStatus
    from appstoreserverlibrary.models.RealtimeUrlRequest import RealtimeUrlRequest
    from appstoreserverlibrary.models.UploadMessageImage import UploadMessageImage
    from appstoreserverlibrary.models.UploadMessageRequestBody import UploadMessageRequestBody
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
    # Retention Messaging
    "imageIdentifiers": LIST, "imageIdentifier": STR, "imageState": STR, "imageSize": STR, "messageIdentifiers": LIST,
    "messageIdentifier": STR, "messageState": STR, "realtimeURL": STR, "config": DICT, "requestId": STR,
    "maxConcurrentRequests": INT, "totalRequests": INT, "totalDuration": INT, "responseTimeThreshold": INT,
    "successRateThreshold": INT, "target": STR, "result": STR, "successRate": INT, "numPending": INT,
    "responseTimes": DICT, "average": INT, "p50": INT, "p90": INT, "p95": INT, "p99": INT, "failures": DICT,
}
ENUMS = {
    "type": Type, "transactionReason": TransactionReason, "inAppOwnershipType": InAppOwnershipType,
    "environment": Environment, "offerDiscountType": OfferDiscountType, "notificationType": NotificationTypeV2,
    "subtype": Subtype, "sendAttemptResult": SendAttemptResult, "revocationReason": RevocationReason,
    "offerType": OfferType, "expirationIntent": ExpirationIntent, "autoRenewStatus": AutoRenewStatus,
    "priceIncreaseStatus": PriceIncreaseStatus, "imageState": ImageState, "messageState": MessageState,
    "imageSize": ImageSize, "result": PerformanceTestStatus,
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
        elif name == "failures":  # send-attempt results to counts
            for result, count in value.items():
                if result not in {member.value for member in SendAttemptResult} or type(count) is not int:
                    self.problems.append(f"{where}.{result}: {count!r}")
        elif isinstance(value, (dict, list)) and name not in ("storefrontCountryCodes", "productIds",
                                                             "eligibleWinBackOfferIds"):
            self.check(where, value)


def png(width, height, alpha=False):
    """A PNG of one colour (RGB, or RGBA when `alpha`), as the Retention Messaging API takes them."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    pixel = b"\x20\x60\xa0\xff" if alpha else b"\x20\x60\xa0"
    rows = (b"\x00" + pixel * width) * height
    header = struct.pack(">IIBBBBB", width, height, 8, 6 if alpha else 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9))
            + chunk(b"IEND", b""))


class RealtimeEndpoint:
    """The developer's Get Retention Message endpoint on loopback: /good verifies the App Store's signed request and
    answers a message; /failing answers 500."""

    def __init__(self, verifier, message_id):
        self.requests, self.problems = [], []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                if self.path == "/failing":
                    self.send_response(500)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                try:
                    decoded = verifier.verify_and_decode_realtime_request(body["signedPayload"])
                    endpoint.requests.append(decoded)
                except Exception as error:
                    endpoint.problems.append(f"{type(error).__name__}: {error}")
                answer = json.dumps({"message": {"messageIdentifier": message_id}}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *arguments):
                pass

        class Server(ThreadingHTTPServer):
            request_queue_size = 128  # the default 5 drops connections under the test's 10 at a time

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def main() -> int:
    parser = argparse.ArgumentParser()
    for name in ["base-url", "key", "key-id", "issuer-id", "bundle-id", "root", "subscription", "purchase",
                 "consumable", "consumable-v1", "finish", "product", "order", "group", "purchase-product"]:
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

    # Retention Messaging: images, messages, defaults, the realtime URL and performance tests.
    picture, icon, message_id = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()

    def images():
        client.upload_image(picture, png(3840, 160), ImageSize.FULL_SIZE)
        client.upload_image(icon, png(1024, 1024), ImageSize.BULLET_POINT)
        listed = client.get_image_list().imageIdentifiers
        return {"images": sorted([str(item.imageIdentifier), item.rawImageState, item.rawImageSize] for item in listed),
                "expected": sorted([[str(picture), "APPROVED", "FULL_SIZE"], [str(icon), "APPROVED", "BULLET_POINT"]]),
                "again": refused(lambda: client.upload_image(picture, png(3840, 160))),
                "transparent": refused(lambda: client.upload_image(uuid.uuid4(), png(3840, 160, alpha=True))),
                "wrongSize": refused(lambda: client.upload_image(uuid.uuid4(), png(3840, 160), ImageSize.BULLET_POINT)),
                "notPNG": refused(lambda: client.upload_image(uuid.uuid4(), b"GIF89a not a png")),
                "deleteUnknown": refused(lambda: client.delete_image(uuid.uuid4()))}
    call("retentionImages", images)

    def messages():
        def body(**fields):
            values = {"header": "Stay with us", "body": "Your flowers keep coming every month."}
            values.update(fields)
            return UploadMessageRequestBody(**values)
        client.upload_message(message_id, body(
            image=UploadMessageImage(imageIdentifier=picture, altText="A bunch of tulips"),
            headerPosition=HeaderPosition.ABOVE_IMAGE,
            bulletPoints=[BulletPoint(text="Fresh every week", imageIdentifier=icon, altText="A tulip")]))
        listed = client.get_message_list().messageIdentifiers
        raw_body = {"header": "h", "body": "b", "bulletPoints": [
            {"text": "t", "imageIdentifier": str(icon), "altText": "a"}] * 6}
        return {"messages": [[str(item.messageIdentifier), item.rawMessageState] for item in listed],
                "expected": [[str(message_id), "APPROVED"]],
                "again": refused(lambda: client.upload_message(message_id, body())),
                "headerTooLong": refused(lambda: client._make_request(
                    f"/inApps/v1/messaging/message/{uuid.uuid4()}", "PUT", {}, {"header": "h" * 67, "body": "b"}, None)),
                "bodyTooLong": refused(lambda: client._make_request(
                    f"/inApps/v1/messaging/message/{uuid.uuid4()}", "PUT", {}, {"header": "h", "body": "b" * 145}, None)),
                "tooManyBulletPoints": refused(lambda: client._make_request(
                    f"/inApps/v1/messaging/message/{uuid.uuid4()}", "PUT", {}, raw_body, None)),
                "aboveImageWithoutImage": refused(lambda: client.upload_message(
                    uuid.uuid4(), body(headerPosition=HeaderPosition.ABOVE_IMAGE))),
                "iconAsPicture": refused(lambda: client.upload_message(uuid.uuid4(), body(
                    image=UploadMessageImage(imageIdentifier=icon, altText="x")))),
                "imageInUse": refused(lambda: client.delete_image(icon))}
    call("retentionMessages", messages)

    def defaults():
        client.configure_default_message(args.product, "en-US", DefaultConfigurationRequest(messageIdentifier=message_id))
        configured = client.get_default_message(args.product, "en-US").messageIdentifier
        client.delete_default_message(args.product, "en-US")
        return {"configured": str(configured), "expected": str(message_id),
                "afterDelete": refused(lambda: client.get_default_message(args.product, "en-US")),
                "badLocale": refused(lambda: client.configure_default_message(
                    args.product, "english", DefaultConfigurationRequest(messageIdentifier=message_id))),
                "notASubscription": refused(lambda: client.configure_default_message(
                    args.purchase_product, "en-US", DefaultConfigurationRequest(messageIdentifier=message_id))),
                "unknownMessage": refused(lambda: client.configure_default_message(
                    args.product, "fr-FR", DefaultConfigurationRequest(messageIdentifier=uuid.uuid4())))}
    call("retentionDefaultMessages", defaults)

    endpoint = RealtimeEndpoint(verifier, str(message_id))

    def performance(path):
        client.configure_realtime_url(RealtimeUrlRequest(realtimeURL=endpoint.url + path))
        started = client.initiate_performance_test(PerformanceTestRequest(originalTransactionId=args.subscription))
        answer = None
        for _ in range(300):
            answer = client.get_performance_test_results(started.requestId)
            if answer.rawResult != "PENDING":
                break
            time.sleep(0.1)
        return {"config": [started.config.maxConcurrentRequests, started.config.totalRequests,
                           started.config.responseTimeThreshold, started.config.successRateThreshold],
                "target": answer.target, "result": answer.rawResult, "successRate": answer.successRate,
                "numPending": answer.numPending, "failures": answer.rawFailures,
                "p99": answer.responseTimes.p99 if answer.responseTimes else None}

    def realtime():
        before = refused(client.get_realtime_url)
        insecure = refused(lambda: client.configure_realtime_url(RealtimeUrlRequest(realtimeURL="http://example.com/x")))
        passing = performance("/good")
        configured = client.get_realtime_url().realtimeURL
        seen = {(r.originalTransactionId, r.productId, r.rawEnvironment, str(r.appAppleId), r.userLocale)
                for r in endpoint.requests}
        failing = performance("/failing")
        client.delete_realtime_url()
        return {"noURL": before, "insecure": insecure, "configured": configured, "passing": passing,
                "failing": failing, "verifiedRequests": len(endpoint.requests), "requestFields": sorted(seen),
                "verificationProblems": endpoint.problems[:5], "afterDelete": refused(client.get_realtime_url),
                "unknownTest": refused(lambda: client.get_performance_test_results(str(uuid.uuid4()))),
                "malformedTest": refused(lambda: client.get_performance_test_results("not-a-uuid")),
                "notASubscription": refused(lambda: client.initiate_performance_test(
                    PerformanceTestRequest(originalTransactionId=args.purchase)))}
    call("retentionRealtime", realtime)

    def cleanup():
        client.delete_message(message_id)
        client.delete_image(icon)
        client.delete_image(picture)
        return {"images": len(client.get_image_list().imageIdentifiers or []),
                "messages": len(client.get_message_list().messageIdentifiers or []),
                "deleteAgain": refused(lambda: client.delete_message(message_id))}
    call("retentionCleanup", cleanup)

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
