import Foundation

extension SimulatorPKI {
    /// The authority saved in `folder` (made and saved there with its keys when the folder holds none), or a new one
    /// for this run only when no folder is given. `iapkit simulate --pki` and `iapkit serve --pki` share it, so what
    /// one signs the other trusts.
    public static func loadOrCreate(folder path: String?) throws -> SimulatorPKI {
        guard let path else { return try SimulatorPKI(keys: .generate()) }
        let folder = URL(fileURLWithPath: path)
        if FileManager.default.fileExists(atPath: folder.appendingPathComponent(FileName.jwsRoot).path) {
            return try SimulatorPKI.load(from: folder)
        }
        let authority = try SimulatorPKI(keys: .generate())
        try authority.export(to: folder, includingKeys: true)
        return authority
    }
}
