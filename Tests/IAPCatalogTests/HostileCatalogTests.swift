import Foundation
import IAPCatalog
import IAPCore
import Testing

/// Writes binary property lists object by object, so tests can build what Apple's writer never would: sets, shared
/// references, cycles, every marker type, broken trailers.
struct BinaryPropertyListBuilder {
    var objects: [[UInt8]] = []

    /// Adds an object's bytes; returns its reference.
    @discardableResult
    mutating func add(_ bytes: [UInt8]) -> Int {
        objects.append(bytes)
        return objects.count - 1
    }

    /// A marker with its count: in the low nibble, or 0xF and an 8-byte integer object.
    static func counted(_ marker: UInt8, _ count: Int) -> [UInt8] {
        count < 15 ? [marker | UInt8(count)] : [marker | 0x0F, 0x13] + bigEndian(UInt64(count), 8)
    }

    static func bigEndian(_ value: UInt64, _ width: Int) -> [UInt8] {
        (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(width - 1 - $0))) }
    }

    static func ascii(_ text: String) -> [UInt8] { counted(0x50, text.utf8.count) + Array(text.utf8) }
    static func utf16(_ text: String) -> [UInt8] {
        counted(0x60, text.utf16.count) + text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }
    static func collection(_ marker: UInt8, _ references: [Int]) -> [UInt8] {
        counted(marker, references.count) + references.flatMap { bigEndian(UInt64($0), 4) }
    }
    static func array(_ references: [Int]) -> [UInt8] { collection(0xA0, references) }
    static func set(_ references: [Int]) -> [UInt8] { collection(0xC0, references) }
    static func dictionary(_ keys: [Int], _ values: [Int]) -> [UInt8] {
        counted(0xD0, keys.count) + (keys + values).flatMap { bigEndian(UInt64($0), 4) }
    }

    /// The file: header, objects, offset table (8-byte offsets), trailer (4-byte references).
    func file(top: Int = 0, version: String = "00") -> Data {
        var bytes = Array("bplist\(version)".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(bytes.count)
            bytes += object
        }
        let table = bytes.count
        for offset in offsets { bytes += Self.bigEndian(UInt64(offset), 8) }
        bytes += [0, 0, 0, 0, 0, 0, 8, 4]
        bytes +=
            Self.bigEndian(UInt64(objects.count), 8) + Self.bigEndian(UInt64(top), 8)
            + Self.bigEndian(UInt64(table), 8)
        return Data(bytes)
    }

    /// `{"Products": [ids...]}` as a binary property list.
    static func productsPlist(_ ids: [String]) -> Data {
        var builder = BinaryPropertyListBuilder()
        let root = builder.add([])
        let key = builder.add(ascii("Products"))
        let list = builder.add([])
        let references = ids.map { builder.add(ascii($0)) }
        builder.objects[list] = array(references)
        builder.objects[root] = dictionary([key], [list])
        return builder.file(top: root)
    }
}

/// Products.plist files built to crash or stall the reader (binary sets, shared references expanding exponentially
/// or quadratically, cycles, broken trailers, XML keyed-archiver UIDs, deep nesting): each is refused with a coded
/// error, or read, in work linear in its size.
struct HostileCatalogTests {
    typealias Builder = BinaryPropertyListBuilder

    func refusal(_ data: Data) -> (error: CatalogError?, steps: Int) {
        let (error, steps) = WorkMeter.measure { () -> CatalogError? in
            do {
                _ = try Catalog.load(data, fileName: "Products.plist")
                return nil
            } catch {
                return error as? CatalogError
            }
        }
        return (error, steps)
    }

    @Test func aBinaryProductsPlistReadsLikeItsXMLTwin() throws {
        let binary = try Catalog.load(Builder.productsPlist(["a.flowers", "a.chocolates"]), fileName: "Products.plist")
        let xml = try Catalog.load(
            Data(
                #"<plist version="1.0"><dict><key>Products</key><array><string>a.flowers</string><string>a.chocolates</string></array></dict></plist>"#
                    .utf8), fileName: "Products.plist")
        #expect(binary.products.map(\.id) == ["a.flowers", "a.chocolates"])
        #expect(binary.products.map(\.id) == xml.products.map(\.id))
    }

    /// Foundation's reader on Linux crashes bridging any non-empty set; here a set is refused wherever it is.
    @Test func setsUIDsAndOrderedSetsAreRefusedAtAnyDepth() {
        var top = Builder()
        top.add(Builder.set([1]))
        top.add(Builder.ascii("a"))
        var nested = Builder()
        nested.add(Builder.dictionary([1], [2]))
        nested.add(Builder.ascii("Subscriptions"))
        nested.add(Builder.array([3]))
        nested.add(Builder.dictionary([4, 5], [6, 7]))
        nested.add(Builder.ascii("Group"))
        nested.add(Builder.ascii("Products"))
        nested.add(Builder.ascii("VIP"))
        nested.add(Builder.set([6]))
        var uid = Builder()
        uid.add(Builder.array([1]))
        uid.add([0x80, 0x01])
        var ordered = Builder()
        ordered.add(Builder.array([1]))
        ordered.add(Builder.collection(0xB0, [0]))
        for (name, file) in [("top", top), ("nested", nested), ("uid", uid), ("ordered", ordered)] {
            let (error, _) = refusal(file.file())
            #expect(error?.code == .unsupportedValue, "\(name): \(String(describing: error))")
        }
        let (error, _) = refusal(nested.file())
        #expect(error?.keyPath == "Subscriptions[0].Products", "the error names where the set is")
    }

    /// An array that refers to the next one twice, `depth` times: 2^depth values from a few bytes per level.
    static func doubling(depth: Int) -> Data {
        var builder = Builder()
        for level in 0..<depth { builder.add(Builder.array([level + 1, level + 1])) }
        builder.add(Builder.ascii("x"))
        return builder.file()
    }

    @Test func sharedReferencesAreReadOnceAndTheirExpansionIsBounded() {
        // 2^16 strings once expanded: read (then refused as no list of ids) in work of the file's 17 objects.
        let (shallow, shallowSteps) = refusal(Self.doubling(depth: 16))
        #expect(shallow?.code == .invalidValue, "\(String(describing: shallow))")
        // 2^40: refused for what it stands for, in the same work.
        let (deep, deepSteps) = refusal(Self.doubling(depth: 40))
        #expect(deep?.code == .limitExceeded, "\(String(describing: deep))")
        #expect(shallowSteps < 2_000 && deepSteps < 2_000, "\(shallowSteps), \(deepSteps)")
    }

    /// `groups` subscription groups that all name one shared list of `groups` ids: quadratic once expanded.
    static func sharedGroups(_ groups: Int) -> Data {
        var builder = Builder()
        let root = builder.add([])
        let subscriptionsKey = builder.add(Builder.ascii("Subscriptions"))
        let groupKey = builder.add(Builder.ascii("Group"))
        let productsKey = builder.add(Builder.ascii("Products"))
        let shared = builder.add([])
        builder.objects[shared] = Builder.array((0..<groups).map { builder.add(Builder.ascii("id\($0)")) })
        let list = (0..<groups).map { index in
            let name = builder.add(Builder.ascii("g\(index)"))
            return builder.add(Builder.dictionary([groupKey, productsKey], [name, shared]))
        }
        let subscriptions = builder.add(Builder.array(list))
        builder.objects[root] = Builder.dictionary([subscriptionsKey], [subscriptions])
        return builder.file(top: root)
    }

    @Test func wideSharingIsRefusedInWorkLinearInTheFile() {
        let (small, smallSteps) = refusal(Self.sharedGroups(1_000))
        let (large, largeSteps) = refusal(Self.sharedGroups(4_000))
        #expect(small?.code == .limitExceeded && large?.code == .limitExceeded)
        #expect(Double(largeSteps) <= 4.5 * Double(smallSteps), "\(smallSteps) -> \(largeSteps)")
        // Under the bound the same shape is read, and its duplicate ids are found.
        let (within, _) = refusal(Self.sharedGroups(100))
        #expect(within?.code == .duplicateProduct)
    }

    @Test func manyProductsAreReadInLinearWork() throws {
        let ids = { (count: Int) in (0..<count).map { "com.example.p\($0)" } }
        let (small, smallSteps) = WorkMeter.measure {
            try? Catalog.load(Builder.productsPlist(ids(5_000)), fileName: "P.plist")
        }
        let (large, largeSteps) = WorkMeter.measure {
            try? Catalog.load(Builder.productsPlist(ids(20_000)), fileName: "P.plist")
        }
        #expect(small?.products.count == 5_000 && large?.products.count == 20_000)
        #expect(Double(largeSteps) <= 4.5 * Double(smallSteps), "\(smallSteps) -> \(largeSteps)")
    }

    @Test func everyMarkerTypeIsReadOrRefusedByName() throws {
        var builder = Builder()
        let root = builder.add([])
        let values: [[UInt8]] = [
            [0x00], [0x08], [0x09],  // null, false, true
            [0x10, 0x7F], [0x11, 0x01, 0x00], [0x12] + Builder.bigEndian(70_000, 4),
            [0x13] + Builder.bigEndian(UInt64(bitPattern: -5), 8),
            [0x14] + Builder.bigEndian(0, 8) + Builder.bigEndian(42, 8),  // a 16-byte integer
            [0x22] + Builder.bigEndian(UInt64(Float(1.5).bitPattern), 4), [0x23] + Builder.bigEndian(2.5.bitPattern, 8),
            [0x33] + Builder.bigEndian(0.0.bitPattern, 8),  // a date
            Builder.counted(0x40, 3) + [1, 2, 3], Builder.utf16("fleurs ✿"),
        ]
        var keys: [Int] = []
        var references: [Int] = []
        for (index, value) in values.enumerated() {
            keys.append(builder.add(Builder.ascii("k\(index)")))
            references.append(builder.add(value))
        }
        keys.append(builder.add(Builder.ascii("Products")))
        references.append(builder.add(Builder.array([builder.add(Builder.utf16("com.example.été"))])))
        builder.objects[root] = Builder.dictionary(keys, references)
        let catalog = try Catalog.load(builder.file(top: root), fileName: "Products.plist")
        #expect(catalog.products.map(\.id) == ["com.example.été"])
        // Markers no catalog value uses, or no format defines, are refused by code.
        for marker: [UInt8] in [[0x0C], [0x0F], [0x70], [0x90], [0xE0], [0xF0], [0x15], [0x21, 0, 0], [0x34]] {
            var odd = Builder()
            odd.add(Builder.array([1]))
            odd.add(marker + Array(repeating: 0, count: 16))
            let (error, _) = refusal(odd.file())
            #expect(error != nil, "marker \(marker)")
        }
    }

    @Test func brokenStructureIsRefusedNeverTrapped() throws {
        var cycle = Builder()
        cycle.add(Builder.array([1]))
        cycle.add(Builder.array([0]))
        #expect(refusal(cycle.file()).error?.code == .malformedFile)
        var dangling = Builder()
        dangling.add(Builder.array([7]))
        #expect(refusal(dangling.file()).error?.code == .malformedFile)
        var huge = Builder()
        huge.add([0xAF, 0x13] + Builder.bigEndian(UInt64.max, 8))
        #expect(refusal(huge.file()).error?.code == .malformedFile)
        #expect(refusal(Builder.productsPlist(["a"]).replacing(at: 7, with: 0x35)).error?.code == .unsupportedVersion)
        // Every prefix and every single-byte change of a valid file: an answer, never a trap.
        let valid = Builder.productsPlist(["com.example.a", "com.example.b"])
        for length in 0..<valid.count { _ = refusal(valid.prefix(length)) }
        for index in 0..<valid.count {
            for byte: UInt8 in [0x00, 0x0F, 0x7F, 0xFF] { _ = refusal(valid.replacing(at: index, with: byte)) }
        }
    }

    @Test func foundationFormatsAreBoundedToo() {
        // An XML keyed-archiver UID, which Foundation turns into an object no catalog value is.
        let uid =
            #"<plist version="1.0"><dict><key>Products</key><array><dict><key>CF$UID</key><integer>1</integer></dict></array></dict></plist>"#
        #expect(refusal(Data(uid.utf8)).error?.code == .unsupportedValue)
        // Nesting past the limit in a .storekit file (JSON) and in XML.
        let json = String(repeating: "{\"a\":", count: 100) + "1" + String(repeating: "}", count: 100)
        let (jsonError, _) = refusal(Data(("{\"products\":[],\"x\":" + json + "}").utf8))
        #expect(jsonError?.code == .limitExceeded, "\(String(describing: jsonError))")
        let xml =
            "<plist>" + String(repeating: "<array>", count: 100_000) + String(repeating: "</array>", count: 100_000)
        #expect(refusal(Data((xml + "</plist>").utf8)).error != nil)
        // A file larger than any catalog.
        #expect(refusal(Data(count: Catalog.maximumFileSize + 1)).error?.code == .limitExceeded)
    }
}

extension Data {
    fileprivate func replacing(at index: Int, with byte: UInt8) -> Data {
        var copy = self
        copy[copy.startIndex + index] = byte
        return copy
    }
}

/// The hand-made files kept in Tests/Regressions/catalog (Scripts/regression-inputs.py) and their outcomes.
struct CatalogRegressionFileTests {
    @Test(arguments: [
        ("bplist-set-top.plist", "unsupportedValue"), ("bplist-set-nested.plist", "unsupportedValue"),
        ("bplist-ordered-set.plist", "unsupportedValue"), ("bplist-uid.plist", "unsupportedValue"),
        ("bplist-doubling.plist", "limitExceeded"), ("bplist-shared-groups.plist", "duplicateProduct"),
        ("bplist-every-marker.plist", "read"), ("bplist-cycle.plist", "malformedFile"),
        ("xml-uid.plist", "unsupportedValue"),
    ])
    func regressionFilesHaveTheirOutcome(name: String, expected: String) {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Regressions/catalog/\(name)").path
        let outcome: String
        do {
            _ = try Catalog.load(contentsOfFile: path)
            outcome = "read"
        } catch {
            outcome = error.code.rawValue
        }
        #expect(outcome == expected, "\(name)")
    }
}
