#!/usr/bin/env python3
"""Checks what each library target reaches, through every target it depends on: the rules of docs/setup.md#layout.

Usage: check-layers.py DESCRIBE_JSON   (the output of `swift package describe --type json`)
Exit status 1 names each target that reaches something it must not.
"""
import json
import sys

# target: what it must not reach (targets of this package, or products of its dependencies)
RULES = {
    "IAPServer": {"IAPSimulator", "IAPSimulatorServer", "IAPSimulatorDelivery", "IAPScenarios", "IAPStoreClient"},
    "IAPStoreClient": {
        "IAPSimulator", "IAPSimulatorServer", "IAPServer", "IAPServerAPI",
        "product:AsyncHTTPClient", "product:NIOCore", "product:NIOPosix", "product:NIOHTTP1", "product:Hummingbird",
    },
    "IAPServerAPI": {"IAPSimulator", "IAPServer"},
    "IAPStoreKit": {"IAPServer", "IAPSimulatorServer", "product:Hummingbird"},
    # What an app links: on Apple platforms StoreKit itself; the stand-in (and the local App Store) only on Linux.
    "IAPStoreKitBackend": {"IAPServer", "IAPServerAPI", "IAPSimulatorServer", "product:Hummingbird"},
    "IAPSimulator": {"IAPServer", "IAPStoreClient", "product:Hummingbird", "product:AsyncHTTPClient"},
}


def main() -> int:
    description = json.load(open(sys.argv[1]))
    targets = {target["name"]: target for target in description["targets"]}

    def reach(name: str, seen: set) -> set:
        for dependency in targets.get(name, {}).get("target_dependencies", []):
            if dependency not in seen:
                seen.add(dependency)
                reach(dependency, seen)
        for product in targets.get(name, {}).get("product_dependencies", []):
            seen.add("product:" + product)
        return seen

    failures = 0
    for name, forbidden in RULES.items():
        if name not in targets:
            print(f"{name}: no such target")
            failures += 1
            continue
        reached = reach(name, set())
        wrong = sorted(reached & forbidden)
        if wrong:
            print(f"{name} reaches {', '.join(wrong)}")
            failures += 1
        else:
            print(f"{name}: reaches none of {', '.join(sorted(forbidden))}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
