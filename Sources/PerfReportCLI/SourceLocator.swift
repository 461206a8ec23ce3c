// Call sites as files of the checkout, for GitHub annotations: a span's site is a `#fileID`,
// `Module/File.swift`, which names the module (not its folder: `Sources/truth-client` holds
// `truth_client`) and drops the folders below the target's. The file is found in the module's
// target folder, or once under the source folders; anything less certain is no file at all,
// since a wrong path is worse than none.
import Foundation

/// Resolves `#fileID`s to paths relative to the repository root (what `file=` of a workflow
/// command wants). One locator per verdict: it remembers the folders it walked, and walks at most
/// `entryLimit` entries in all, so a huge checkout cannot make `check` slow.
final class SourceLocator {
    /// Entries (files and folders) one locator looks at, at most.
    static let defaultEntryLimit = 20_000
    /// Folders deeper than this below a target folder are not searched.
    static let maxDepth = 24
    /// Where SwiftPM looks for target folders by default (`Tests` for test targets).
    static let sourceRoots = ["Sources", "Source", "src", "srcs"]
    static let targetRoots = sourceRoots + ["Tests"]

    /// The repository root, absolute.
    let root: String
    /// The package's folder relative to `root`: empty, or e.g. `services/api`.
    let package: String
    private var budget: Int
    /// Per folder (package-relative) walked: file name → package-relative paths; nil when the
    /// walk was cut short.
    private var indexes: [String: [String: [String]]?] = [:]
    private lazy var manifest: [ManifestTarget] = {
        let path = directory("Package.swift")
        guard let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int,
            size <= 1 << 20, let data = FileManager.default.contents(atPath: path)
        else { return [] }
        return Self.manifestTargets(String(decoding: data, as: UTF8.self))
    }()
    /// Every folder directly under a target root, package-relative (`Sources/truth-client`).
    private lazy var targetFolders: [String] = Self.targetRoots.flatMap { root in
        subfolders(root).map { root + "/" + $0 }
    }

    /// - Parameters:
    ///   - root: The repository root; paths are relative to it.
    ///   - package: The package's folder below `root` (empty: the root itself).
    init(root: String, package: String = "", entryLimit: Int = SourceLocator.defaultEntryLimit) {
        self.root = root
        self.package = package
        budget = entryLimit
    }

    /// The locator of `perf-report`: the repository is `$GITHUB_WORKSPACE`, or the current
    /// directory when it is unset or empty. Inside the workspace, the package is the nearest
    /// folder from the current directory up with a Package.swift (a step's `working-directory:`).
    static func forCheckout(environment: [String: String], currentDirectory: String) -> SourceLocator {
        let current = URL(fileURLWithPath: currentDirectory, isDirectory: true).standardizedFileURL
            .resolvingSymlinksInPath()
        guard let variable = environment["GITHUB_WORKSPACE"], !variable.isEmpty else {
            return SourceLocator(root: current.path)
        }
        let workspace = URL(fileURLWithPath: variable, isDirectory: true, relativeTo: current).standardizedFileURL
            .resolvingSymlinksInPath()
        let base = workspace.pathComponents
        let here = current.pathComponents
        guard here.count >= base.count, Array(here.prefix(base.count)) == base else {
            return SourceLocator(root: workspace.path)
        }
        var inside = Array(here.dropFirst(base.count))
        while !inside.isEmpty {
            let package = inside.joined(separator: "/")
            if FileManager.default.fileExists(atPath: workspace.path + "/" + package + "/Package.swift") {
                return SourceLocator(root: workspace.path, package: package)
            }
            inside.removeLast()
        }
        return SourceLocator(root: workspace.path)
    }

    /// `Module/File.swift` as a path relative to the root, e.g. `Sources/truth-client/Sub/File.swift`:
    /// the one file of that name in the module's target folder, or, when the package has no
    /// folder of the module, the one under the source folders outside the other targets'
    /// folders. Nil when there is none, more than one, or the search was cut short.
    func path(forFileID fileID: String) -> String? {
        guard let slash = fileID.firstIndex(of: "/") else { return nil }
        let module = String(fileID[..<slash])
        let file = String(fileID[fileID.index(after: slash)...])
        let parts = file.split(separator: "/", omittingEmptySubsequences: false)
        guard !module.isEmpty, let name = parts.last.map(String.init), !name.isEmpty,
            !parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." })
        else { return nil }
        let folders = moduleFolders(module)
        let found: String?
        if folders.isEmpty {
            let others = claimedFolders(except: module)
            found = unique(name, suffix: file, in: Self.sourceRoots.filter { isFolder($0) }) { path in
                !others.contains { Self.isInside(path, $0) }
            }
        } else {
            found = unique(name, suffix: file, in: folders) { _ in true }
        }
        guard let found else { return nil }
        return package.isEmpty ? found : package + "/" + found
    }

    /// The module's target folders: the manifest's `path:` for it, else each folder under a
    /// target root named like the module, or whose C99 name is the module's (SwiftPM's rule).
    func moduleFolders(_ module: String) -> [String] {
        let declared = manifest.filter { Self.c99Name($0.name) == module }.compactMap(\.path)
            .compactMap(Self.normalized)
        if !declared.isEmpty { return Array(Set(declared)).sorted().filter { isFolder($0) } }
        let elsewhere = manifest.filter { Self.c99Name($0.name) != module }.compactMap(\.path)
            .compactMap(Self.normalized)
        return targetFolders.filter { folder in
            let name = folder.split(separator: "/").last.map(String.init) ?? ""
            return (name == module || Self.c99Name(name) == module) && !elsewhere.contains(folder)
        }
    }

    /// The folders of the manifest's other targets: their `path:`, or their default folders.
    func claimedFolders(except module: String) -> [String] {
        manifest.filter { Self.c99Name($0.name) != module }.flatMap { target in
            target.path.map { Self.normalized($0).map { [$0] } ?? [] }
                ?? Self.targetRoots.map { $0 + "/" + target.name }
        }
    }

    /// The one file named `name` whose path ends in `suffix` under `folders`, among those `keep`
    /// accepts; nil for none, several, or a walk cut short.
    private func unique(_ name: String, suffix: String, in folders: [String], where keep: (String) -> Bool)
        -> String?
    {
        var matches: Set<String> = []
        for folder in folders {
            guard let index = index(folder) else { return nil }
            for path in index[name] ?? [] {
                let inFolder = path.dropFirst(folder.count + 1)
                if (inFolder == suffix || inFolder.hasSuffix("/" + suffix)) && keep(path) { matches.insert(path) }
            }
        }
        return matches.count == 1 ? matches.first : nil
    }

    /// File name → paths under `folder` (package-relative), walked once; nil when cut short by
    /// the entry limit or the depth. Hidden entries (`.build`, `.git`) and folders that are
    /// symbolic links are skipped.
    private func index(_ folder: String) -> [String: [String]]? {
        if let known = indexes[folder] { return known }
        var files: [String: [String]] = [:]
        var pending = [(folder, 0)]
        var complete = true
        walk: while let (relative, depth) = pending.popLast() {
            for entry in entries(relative) {
                guard budget > 0 else {
                    complete = false
                    break walk
                }
                budget -= 1
                let path = relative + "/" + entry
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: directory(path), isDirectory: &isFolder) else { continue }
                if !isFolder.boolValue {
                    files[entry, default: []].append(path)
                } else if (try? FileManager.default.destinationOfSymbolicLink(atPath: directory(path))) == nil {
                    guard depth < Self.maxDepth else {
                        complete = false
                        break walk
                    }
                    pending.append((path, depth + 1))
                }
            }
        }
        let index = complete ? files : nil
        indexes[folder] = .some(index)
        return index
    }

    /// The folders directly in `relative` (package-relative), visible ones only, counted
    /// against the entry limit.
    private func subfolders(_ relative: String) -> [String] {
        entries(relative).filter { entry in
            guard budget > 0 else { return false }
            budget -= 1
            return isFolder(relative + "/" + entry)
        }
    }

    /// The visible entries of a package-relative folder, sorted; none when it cannot be read.
    private func entries(_ relative: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory(relative))) ?? [])
            .filter { !$0.hasPrefix(".") }.sorted()
    }

    private func isFolder(_ relative: String) -> Bool {
        var isFolder: ObjCBool = false
        return FileManager.default.fileExists(atPath: directory(relative), isDirectory: &isFolder) && isFolder.boolValue
    }

    /// The absolute path of a package-relative one.
    private func directory(_ relative: String) -> String {
        [root, package, relative].filter { !$0.isEmpty }.joined(separator: "/")
    }

    /// A manifest `path:` as a package-relative folder (`./Lib/core/` → `Lib/core`); nil for one
    /// outside the package.
    static func normalized(_ path: String) -> String? {
        let parts = path.split(separator: "/").filter { $0 != "." }
        guard !path.hasPrefix("/"), !parts.isEmpty, !parts.contains("..") else { return nil }
        return parts.joined(separator: "/")
    }

    /// Whether package-relative `path` is `folder` or below it.
    static func isInside(_ path: String, _ folder: String) -> Bool {
        path == folder || path.hasPrefix(folder + "/")
    }

    /// SwiftPM's module name of a target name: every character not allowed in a C99 identifier
    /// becomes `_`, and so do leading digits (`truth-client` → `truth_client`, `2fa` → `_fa`).
    static func c99Name(_ name: String) -> String {
        var scalars = String.UnicodeScalarView()
        var leading = true
        for scalar in name.unicodeScalars {
            let digit = ("0"..."9").contains(scalar)
            let allowed =
                scalar.isASCII
                ? digit || scalar == "_" || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
                : scalar.properties.isAlphabetic || scalar.properties.numericType != nil
            scalars.append(allowed && !(leading && digit) ? scalar : "_")
            if !digit { leading = false }
        }
        return String(scalars)
    }
}
