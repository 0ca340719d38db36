public import Foundation
public import IAPTrust
public import X509

/// Chains minted in process from the fixed test keys: a trusted one and rogue ones for the attacks.
public enum TestPKI {
    public static let notValidBefore = Date(timeIntervalSince1970: 1_577_836_800)  // 2020-01-01
    public static let notValidAfter = Date(timeIntervalSince1970: 2_524_608_000)  // 2050-01-01
    /// A moment inside every test chain's validity.
    public static let signingTime = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01

    /// The chain the tests trust: Apple-shaped, markers on leaf and intermediate.
    public static let trusted: MintedChain = mint()

    /// Mints a chain from the fixed keys with some of Apple's shape switched off.
    public static func mint(
        rootKey: Certificate.PrivateKey = TestKeys.root,
        intermediateKey: Certificate.PrivateKey = TestKeys.intermediate,
        leafKey: Certificate.PrivateKey = TestKeys.leaf,
        notValidBefore: Date = notValidBefore,
        notValidAfter: Date = notValidAfter,
        options: MintedChain.Options = MintedChain.Options()
    ) -> MintedChain {
        // Minting from valid fixed keys cannot fail; if it does, the test setup itself is broken.
        try! MintedChain.mint(
            rootKey: rootKey, intermediateKey: intermediateKey, leafKey: leafKey,
            notValidBefore: notValidBefore, notValidAfter: notValidAfter, options: options)
    }
}
