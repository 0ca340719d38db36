#!/usr/bin/env bash
# The targets an app links must run from iOS 16, macOS 13, tvOS 16, watchOS 9 and visionOS 1. Without a Mac to
# compile for those, this looks for the APIs this code base would reach for that are newer: Synchronization's Mutex
# and Atomic (iOS 18), spans and inline arrays (iOS 26), Observation (iOS 17, allowed only in a file that declares
# @available(iOS 17.0...)). Apple's StoreKit calls in IAPStoreKitBackend are checked by reading their availability.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
for target in IAPCore IAPTrust IAPReceipts IAPSignedData IAPCatalog IAPEntitlements IAPStoreClient IAPStoreKitBackend; do
    while IFS= read -r file; do
        if grep -nE '\bMutex\b|\bAtomic<|import Synchronization|\bSpan\b|\bRawSpan\b|\bInlineArray\b|\bUTF8Span\b' "$file" \
            | grep -v '^[0-9]*:\s*///'; then
            echo "  in $file: newer than the app side's platforms"
            status=1
        fi
        if grep -hE '@Observable|withObservationTracking' "$file" | grep -v '^\s*///' | grep -q . \
            && ! grep -q '@available(iOS 17.0' "$file"; then
            echo "$file: Observation needs @available(iOS 17.0, macOS 14.0, ...)"
            status=1
        fi
    done < <(find "Sources/$target" -name '*.swift')
done
[ $status -eq 0 ] && echo "app-side targets: nothing newer than iOS 16 / macOS 13 / tvOS 16 / watchOS 9 / visionOS 1 found"
exit $status
