#!/bin/bash
# Builds the DocC documentation of every library target with warnings as errors (swift-docc-plugin).
# Usage: Scripts/docs.sh [TARGET...]   (all library targets by default; archives land in .build/plugins/Swift-DocC/outputs)
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(IAPCore IAPTrust IAPReceipts IAPSignedData IAPCatalog IAPEntitlements IAPSimulator IAPSimulatorDelivery IAPScenarios IAPServer IAPServerAPI IAPStoreClient)
if [ "$#" -gt 0 ]; then targets=("$@"); fi
arguments=()
for target in "${targets[@]}"; do arguments+=(--target "$target"); done
exec swift package --disable-sandbox generate-documentation "${arguments[@]}" --warnings-as-errors
