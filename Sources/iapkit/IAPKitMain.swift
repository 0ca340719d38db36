import ArgumentParser
import IAPKitCLI

/// The `iapkit` executable: everything lives in IAPKitCLI so tests can run the commands in process.
@main
struct IAPKitMain {
    static func main() async {
        await IAPKitCommand.mainSplittingPaths()
    }
}
