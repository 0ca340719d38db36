#!/usr/bin/env python3
"""Cross-check: verify signed data with Apple's own app-store-server-library (PyPI), default strict mode.

Usage: apple-verify.py --root ROOT.der [--root ...] --bundle-id ID --environment Sandbox KIND=FILE...
KIND is transaction, renewal, notification or app; a notification file may hold the JWS or the request body
{"signedPayload": "..."}. Prints one line per file, "ok KIND FILE" or
"FAILED KIND FILE: reason", and exits 1 if any failed, 2 if the library is missing.
"""
import argparse
import json
import sys

try:
    from appstoreserverlibrary.models.Environment import Environment
    from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier
except ImportError:
    print("app-store-server-library is not installed (pip install app-store-server-library)", file=sys.stderr)
    sys.exit(2)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", action="append", required=True)
    parser.add_argument("--bundle-id", required=True)
    parser.add_argument("--environment", default="Sandbox")
    parser.add_argument("--app-apple-id", type=int)
    parser.add_argument("documents", nargs="+")
    args = parser.parse_args()

    roots = [open(path, "rb").read() for path in args.root]
    verifier = SignedDataVerifier(
        roots, False, Environment(args.environment), args.bundle_id, args.app_apple_id)
    methods = {
        "transaction": verifier.verify_and_decode_signed_transaction,
        "renewal": verifier.verify_and_decode_renewal_info,
        "notification": verifier.verify_and_decode_notification,
        "app": verifier.verify_and_decode_app_transaction,
    }
    failed = 0
    for document in args.documents:
        kind, _, path = document.partition("=")
        text = open(path).read().strip()
        if text.startswith("{"):
            text = json.loads(text)["signedPayload"]
        try:
            methods[kind](text)
            print(f"ok {kind} {path}")
        except Exception as error:  # the library raises VerificationException with a status
            failed += 1
            print(f"FAILED {kind} {path}: {getattr(error, 'status', error)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
