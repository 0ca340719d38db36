import ArgumentParser
import IAPSignedData
import IAPTrust

/// The options a command that verifies signed data shares with `jws verify`: the app's Apple id and the environment.
struct SignedDataOptions: ParsableArguments {
    @Option(name: .customLong("app-apple-id"), help: "The app's Apple id (required with --environment Production).")
    var appAppleID: Int64?

    @Option(help: "The environment every signed document must name: Production, Sandbox, Xcode or LocalTesting.")
    var environment: String?

    func validate() throws {
        if environment == "Production", appAppleID == nil {
            throw ValidationError("--environment Production needs --app-apple-id.")
        }
    }

    /// The verifier these options describe, or nil after reporting why it cannot be made.
    func verifier(trustStore: TrustStore, bundleID: String?, output: some CommandOutput) -> SignedDataVerifier? {
        do {
            return try SignedDataVerifier(
                trustStore: trustStore,
                configuration: .init(
                    bundleID: bundleID, appAppleID: appAppleID,
                    environments: environment.map { [AppStoreEnvironment(rawValue: $0)] }))
        } catch {
            output.diagnostic("error: \(error.reason) [\(error.code)]")
            return nil
        }
    }
}
