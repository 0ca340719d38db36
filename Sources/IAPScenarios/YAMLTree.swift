import CYaml
import IAPCore

/// A YAML (or JSON) document read into IAPKit's own tree, in time linear in the text's size.
///
/// Built from libyaml's events (the C parser Yams carries) instead of Yams' `Node` and `YAMLDecoder`, for two measured
/// reasons: Yams' keyed lookup scans a mapping's pairs, so a mapping of n keys decodes in O(n²); and its composer
/// hashes keys whole to find duplicates, so aliases nested inside complex keys expand exponentially. Here a mapping is
/// a dictionary, a key must be a scalar, and an alias reuses the anchored node (one copy in memory) while the values
/// it stands for are counted as if expanded and bounded by ``Limits``. Merge keys (`<<: *base`) work as in Yams.
struct YAMLNode: Sendable {
    enum Content: Sendable {
        /// A scalar's text, and whether it was written plain (unquoted): only plain scalars can be null or booleans.
        case scalar(String, plain: Bool)
        case sequence([YAMLNode])
        /// The entries by key, and the keys in the order the file gives them.
        case mapping([String: YAMLNode], keys: [String])
    }

    let content: Content
    /// The line the node starts on, from 1.
    let line: Int
    /// How many nodes it stands for with every alias expanded.
    let expandedSize: Int

    /// Whether the node is YAML's null: a plain `~`, `null` or nothing.
    var isNull: Bool {
        guard case .scalar(let text, plain: true) = content else { return false }
        return ["", "~", "null", "Null", "NULL"].contains(text)
    }

    /// What readers refuse beyond.
    enum Limits {
        /// Alias uses in one document.
        static let aliases = 10_000
        /// Nodes aliases and merges stand for, expanded, beyond those written in the file.
        static let aliasedNodes = 200_000
        /// Nesting of sequences and mappings (a scenario nests four deep).
        static let depth = 64
    }

    /// Reads the single document of `text`.
    static func parse(_ text: String) throws(ScenarioError) -> YAMLNode {
        var text = text
        var builder = YAMLTreeBuilder()
        let result = text.withUTF8 { bytes in
            Result { () throws(ScenarioError) -> YAMLNode in try builder.build(bytes) }
        }
        return try result.get()
    }
}

/// Turns libyaml's events into ``YAMLNode``s with an explicit stack (no recursion on the input's nesting).
private struct YAMLTreeBuilder {
    /// A sequence or mapping being read: a class, so adding to it never copies what it holds so far.
    final class Frame {
        let isMapping: Bool
        let anchor: String?
        let line: Int
        var expanded = 1
        var items: [YAMLNode] = []
        var entries: [String: YAMLNode] = [:]
        var keys: [String] = []
        /// Mappings named by `<<` keys, merged at the end where their keys are not given explicitly.
        var merges: [YAMLNode] = []
        /// The key read, waiting for its value: its text and line, and whether it is the merge key `<<`.
        var pendingKey: (text: String, line: Int, isMerge: Bool)?

        init(isMapping: Bool, anchor: String?, line: Int) {
            self.isMapping = isMapping
            self.anchor = anchor
            self.line = line
        }
    }

    var stack: [Frame] = []
    var anchors: [String: YAMLNode] = [:]
    var aliasCount = 0
    /// The nodes aliases and merges stand for beyond the nodes written in the file.
    var aliasedNodes = 0
    var root: YAMLNode?
    var documents = 0

    mutating func build(_ bytes: UnsafeBufferPointer<UInt8>) throws(ScenarioError) -> YAMLNode {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else {
            throw ScenarioError(.unreadable, "the YAML parser could not start")
        }
        defer { yaml_parser_delete(&parser) }
        yaml_parser_set_input_string(&parser, bytes.baseAddress, bytes.count)
        var event = yaml_event_t()
        while true {
            guard yaml_parser_parse(&parser, &event) == 1 else {
                let line = parser.problem_mark.line + 1
                let problem = parser.problem.map { String(cString: $0) } ?? "unreadable YAML"
                // libyaml's own bound on nesting (1,000 levels), met before the tree's when flow collections nest.
                let code: ScenarioError.Code = problem.contains("nesting level") ? .limitExceeded : .unreadable
                throw ScenarioError(code, "line \(line): not YAML: \(problem)")
            }
            defer { yaml_event_delete(&event) }
            WorkMeter.tick()
            let line = event.start_mark.line + 1
            switch event.type {
            case YAML_STREAM_END_EVENT:
                guard let root else { throw ScenarioError(.unreadable, "the file holds no YAML document") }
                return root
            case YAML_DOCUMENT_START_EVENT:
                documents += 1
                guard documents == 1 else {
                    throw ScenarioError(.unreadable, "line \(line): a second YAML document; a scenario is one")
                }
            case YAML_SCALAR_EVENT:
                let scalar = event.data.scalar
                let text = String(
                    decoding: UnsafeBufferPointer(start: scalar.value, count: scalar.length), as: UTF8.self)
                let plain = scalar.style == YAML_PLAIN_SCALAR_STYLE
                let node = YAMLNode(content: .scalar(text, plain: plain), line: line, expandedSize: 1)
                try complete(node, anchor: Self.text(scalar.anchor), line: line)
            case YAML_ALIAS_EVENT:
                let name = Self.text(event.data.alias.anchor) ?? ""
                guard let node = anchors[name] else {
                    throw ScenarioError(.unreadable, "line \(line): the alias *\(name) names no anchor before it")
                }
                aliasCount += 1
                guard aliasCount <= YAMLNode.Limits.aliases else {
                    throw ScenarioError(
                        .limitExceeded, "line \(line): more than \(YAMLNode.Limits.aliases) aliases in one document")
                }
                try countAliased(node.expandedSize, line: line)
                try complete(node, anchor: nil, line: line)
            case YAML_SEQUENCE_START_EVENT:
                try push(Frame(isMapping: false, anchor: Self.text(event.data.sequence_start.anchor), line: line))
            case YAML_MAPPING_START_EVENT:
                try push(Frame(isMapping: true, anchor: Self.text(event.data.mapping_start.anchor), line: line))
            case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                let frame = stack.removeLast()
                try complete(try finish(frame), anchor: frame.anchor, line: frame.line)
            default:
                break  // stream start, document end: nothing to build
            }
        }
    }

    private static func text(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        pointer.map { String(cString: $0) }
    }

    private mutating func push(_ frame: Frame) throws(ScenarioError) {
        guard stack.count < YAMLNode.Limits.depth else {
            throw ScenarioError(
                .limitExceeded, "line \(frame.line): nested deeper than \(YAMLNode.Limits.depth) levels")
        }
        stack.append(frame)
    }

    /// The node a closed collection makes; a mapping's merges are applied here.
    private mutating func finish(_ frame: Frame) throws(ScenarioError) -> YAMLNode {
        guard frame.isMapping else {
            return YAMLNode(content: .sequence(frame.items), line: frame.line, expandedSize: frame.expanded)
        }
        for source in frame.merges {
            guard case .mapping(let entries, let keys) = source.content else { continue }
            for key in keys where frame.entries[key] == nil {
                WorkMeter.tick()
                let value = entries[key]!
                frame.entries[key] = value
                frame.keys.append(key)
                frame.expanded += value.expandedSize + 1
                try countAliased(value.expandedSize + 1, line: frame.line)
            }
        }
        return YAMLNode(
            content: .mapping(frame.entries, keys: frame.keys), line: frame.line, expandedSize: frame.expanded)
    }

    /// Places a finished node (read, closed or aliased) into the collection being read, or makes it the root.
    private mutating func complete(_ node: YAMLNode, anchor: String?, line: Int) throws(ScenarioError) {
        if let anchor { anchors[anchor] = node }
        guard let top = stack.last else {
            root = node
            return
        }
        guard top.isMapping else {
            top.items.append(node)
            top.expanded += node.expandedSize
            return
        }
        guard let key = top.pendingKey else {
            guard case .scalar(let text, let plain) = node.content else {
                throw ScenarioError(
                    .complexKey, "line \(line): a key that is a list or a mapping; keys must be plain text")
            }
            top.pendingKey = (text, line, plain && text == "<<")
            return
        }
        top.pendingKey = nil
        if key.isMerge {
            try merge(node, into: top, line: key.line)
            return
        }
        guard top.entries.updateValue(node, forKey: key.text) == nil else {
            throw ScenarioError(.duplicateKey, "line \(key.line): the key '\(key.text)' appears twice")
        }
        top.keys.append(key.text)
        top.expanded += node.expandedSize + 1
    }

    /// A `<<` merge key's value: a mapping, or a list of mappings (earlier ones win).
    private func merge(_ node: YAMLNode, into frame: Frame, line: Int) throws(ScenarioError) {
        switch node.content {
        case .mapping:
            frame.merges.append(node)
        case .sequence(let items):
            for item in items {
                guard case .mapping = item.content else {
                    throw ScenarioError(.unreadable, "line \(line): '<<' merges mappings only")
                }
                frame.merges.append(item)
            }
        case .scalar:
            throw ScenarioError(.unreadable, "line \(line): '<<' merges mappings only")
        }
    }

    /// Counts nodes an alias or a merge stands for, refusing past the limit: the nodes written in the file are
    /// bounded by its size, these by ``YAMLNode/Limits/aliasedNodes``.
    private mutating func countAliased(_ nodes: Int, line: Int) throws(ScenarioError) {
        aliasedNodes += nodes
        guard aliasedNodes <= YAMLNode.Limits.aliasedNodes else {
            throw ScenarioError(
                .limitExceeded,
                "line \(line): the aliases stand for more than \(YAMLNode.Limits.aliasedNodes) values once expanded")
        }
    }
}
