#!/usr/bin/env python3
"""Cross-check: offer signatures made by Apple's app-store-server-library (PyPI) and by IAPKit, for the same inputs.

Makes the library's promotional offer signature (V1, capturing the exact bytes it signs), promotional offer V2 JWS and
introductory offer eligibility JWS, and checks IAPKit's: the V1 signature must verify with the key's public half over
the library's bytes; the JWS ones must verify (ES256, the key id in the header) and carry the same claims as the
library's, but for iat and nonce. Prints one JSON object; exits 1 if a check failed, 2 if the library is missing.

Usage: apple-offer-signatures.py --key P8 --key-id ID --issuer-id ID --bundle-id ID --product ID --offer ID
       --token APP_ACCOUNT_TOKEN --nonce UUID --timestamp MS --transaction ID --ours-v1 B64 --ours-v2 JWS
       --ours-intro JWS --customer-v2 TRANSACTION --customer-intro TRANSACTION
(--customer-v2 and --customer-intro: the library also signs a V2 offer and an eligibility that grants the
introductory offer, each for that customer's transaction id.)
"""
import argparse
import base64
import json
import sys
import uuid

try:
    import jwt
    from appstoreserverlibrary.jws_signature_creator import (
        IntroductoryOfferEligibilitySignatureCreator, PromotionalOfferV2SignatureCreator)
    from appstoreserverlibrary.promotional_offer import PromotionalOfferSignatureCreator
    from cryptography.hazmat.primitives.asymmetric.ec import ECDSA
    from cryptography.hazmat.primitives.hashes import SHA256
except ImportError:
    print("app-store-server-library is not installed (pip install app-store-server-library)", file=sys.stderr)
    sys.exit(2)


class Recording:
    """Stands in for the library's private key: records the bytes it is asked to sign."""

    def __init__(self, key):
        self.key, self.signed = key, None

    def sign(self, data, algorithm):
        self.signed = data
        return self.key.sign(data, algorithm)


def main() -> int:
    parser = argparse.ArgumentParser()
    for name in ["key", "key-id", "issuer-id", "bundle-id", "product", "offer", "token", "nonce", "timestamp",
                 "transaction", "ours-v1", "ours-v2", "ours-intro", "customer-v2", "customer-intro"]:
        parser.add_argument("--" + name, required=True)
    args = parser.parse_args()
    pem = open(args.key, "rb").read()

    v1 = PromotionalOfferSignatureCreator(pem, args.key_id, args.bundle_id)
    recording = Recording(v1._signing_key)
    v1._signing_key = recording
    theirs_v1 = v1.create_signature(args.product, args.offer, args.token, uuid.UUID(args.nonce), int(args.timestamp))
    public = recording.key.public_key()
    checks = {}
    try:
        public.verify(base64.b64decode(getattr(args, "ours_v1")), recording.signed, ECDSA(SHA256()))
        checks["oursV1VerifiesOverTheLibrarysBytes"] = True
    except Exception as error:
        checks["oursV1VerifiesOverTheLibrarysBytes"] = f"{type(error).__name__}: {error}"

    theirs_v2 = PromotionalOfferV2SignatureCreator(pem, args.key_id, args.issuer_id, args.bundle_id).create_signature(
        args.product, args.offer, args.transaction)
    theirs_intro = IntroductoryOfferEligibilitySignatureCreator(
        pem, args.key_id, args.issuer_id, args.bundle_id).create_signature(args.product, False, args.transaction)
    for name, ours, theirs, audience in [("V2", args.ours_v2, theirs_v2, "promotional-offer"),
                                         ("Intro", args.ours_intro, theirs_intro, "introductory-offer-eligibility")]:
        try:
            header = jwt.get_unverified_header(ours)
            claims = jwt.decode(ours, public, algorithms=["ES256"], audience=audience)
            reference = jwt.decode(theirs, public, algorithms=["ES256"], audience=audience)
            same = {k: v for k, v in claims.items() if k not in ("iat", "nonce")} == \
                {k: v for k, v in reference.items() if k not in ("iat", "nonce")}
            checks[f"ours{name}Verifies"] = header.get("kid") == args.key_id and header.get("alg") == "ES256"
            checks[f"ours{name}HasTheLibrarysClaims"] = same or f"{claims} != {reference}"
        except Exception as error:
            checks[f"ours{name}Verifies"] = f"{type(error).__name__}: {error}"
    # Signatures for other customers' purchases (the caller buys with them).
    customer_v2 = PromotionalOfferV2SignatureCreator(
        pem, args.key_id, args.issuer_id, args.bundle_id).create_signature(args.product, args.offer, args.customer_v2)
    customer_intro = IntroductoryOfferEligibilitySignatureCreator(
        pem, args.key_id, args.issuer_id, args.bundle_id).create_signature(args.product, True, args.customer_intro)
    print(json.dumps({"librarySignedBytes": recording.signed.hex(), "theirsV1": theirs_v1, "theirsV2": theirs_v2,
                      "theirsIntro": theirs_intro, "customerV2": customer_v2, "customerIntro": customer_intro,
                      "checks": checks}))
    return 0 if all(value is True for value in checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
