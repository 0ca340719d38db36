import Foundation
import IAPFuzzHarness

// Built with `-sanitize=fuzzer,address -D IAPKIT_LIBFUZZER` by Scripts/fuzz.sh: libFuzzer provides `main` and calls
// this for every input; IAPKIT_FUZZ_TARGET names the harness. Built normally, it is a replay tool:
// `swift run iapkit-fuzz TARGET FILE...` runs files through a harness and prints each outcome, and
// `iapkit-fuzz --time TARGET FILE...` times them (Scripts/hostile-bench.sh).

#if IAPKIT_LIBFUZZER
    private let fuzzTarget: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["IAPKIT_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
            FileHandle.standardError.write(Data("IAPKIT_FUZZ_TARGET must be one of: \(names)\n".utf8))
            exit(2)
        }
        return target
    }()

    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
        _ = FuzzHarness.runBlocking(fuzzTarget, Array(UnsafeBufferPointer(start: data, count: count)))
        return 0
    }

    /// libFuzzer's driver, for a `main` of our own (LLVMFuzzerRunDriver, libFuzzer's documented entry for that).
    @_silgen_name("LLVMFuzzerRunDriver")
    func runFuzzerDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
    ) -> CInt

    /// SwiftPM links an executable's `main` to `<module>_main`; this one hands over to libFuzzer.
    @_cdecl("iapkit_fuzz_main")
    public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
        var count = argc
        var arguments = argv
        return runFuzzerDriver(&count, &arguments, fuzzOneInput)
    }
#else
    @main
    struct ReplayFuzzInputs {
        static func main() {
            var arguments = Array(CommandLine.arguments.dropFirst())
            let timing = arguments.first == "--time"
            if timing { arguments.removeFirst() }
            guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
                let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")
                print("usage: iapkit-fuzz [--time] \(names) FILE...")
                print("  runs each file through the harness and prints its outcome, or with --time the median time")
                print("  of one run and the time per byte, as tab-separated: file, bytes, ns per run, ns per byte")
                exit(2)
            }
            for path in arguments.dropFirst() {
                guard let data = FileManager.default.contents(atPath: path) else {
                    print("\(path): unreadable")
                    continue
                }
                let bytes = Array(data)
                if timing {
                    let perRun = medianNanoseconds { _ = FuzzHarness.runBlocking(target, bytes) }
                    let perByte = perRun / Double(max(bytes.count, 1))
                    print("\(path)\t\(bytes.count)\t\(Int(perRun))\t\(String(format: "%.2f", perByte))")
                } else {
                    print("\(path): \(FuzzHarness.runBlocking(target, bytes))")
                }
            }
        }

        /// The median wall time of `body` over at least 5 runs and at least 0.3 s (at most 2,000 runs).
        static func medianNanoseconds(_ body: () -> Void) -> Double {
            body()  // warm caches (chain cache, header cache) as a server would have them
            var samples: [Double] = []
            let clock = ContinuousClock()
            let start = clock.now
            while samples.count < 5 || (clock.now - start < .milliseconds(300) && samples.count < 2_000) {
                let began = clock.now
                body()
                let elapsed = clock.now - began
                samples.append(
                    Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9)
            }
            samples.sort()
            return samples[samples.count / 2]
        }
    }
#endif
