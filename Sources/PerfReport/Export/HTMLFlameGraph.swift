// The layout of the html export's flame graphs: a slow span name's sampled stacks merged into one
// tree, root at the bottom, each frame as wide as its share of the samples. Pure: the same stacks
// always give the same boxes.

/// Stacks merged into rows of boxes: row 0 is the root (every sample), row `n` the `n`-th frame
/// from the outermost.
struct HTMLFlameGraph: Equatable {
    /// One frame of the merged tree.
    struct Box: Equatable {
        var name: String
        /// The row: 0 for the root, 1 for the outermost frames.
        var depth: Int
        /// Samples left of this box in its row, and its own samples.
        var offset: Int64, count: Int64
    }

    /// Frames past this depth (from the outermost) are cut: their samples stay in the frame above.
    static let maximumDepth = 64
    /// The root box's name.
    static let rootName = "all samples"

    /// Samples in all.
    private(set) var total: Int64 = 0
    /// Every box, parents before children, siblings by name.
    private(set) var boxes: [Box] = []
    /// Rows, root included.
    var rows: Int { (boxes.map(\.depth).max() ?? -1) + 1 }

    /// Merges `stacks` (frames innermost first, as ledger lines store them, and a sample count);
    /// a stack without frames is the one box `emptyStackName` (a profile's folded `other` entry).
    init(stacks: [(frames: [String], count: Int64)], emptyStackName: String = "other") {
        final class Node {
            var count: Int64 = 0
            var children: [String: Node] = [:]
        }
        let root = Node()
        for stack in stacks where stack.count > 0 {
            let frames = stack.frames.isEmpty ? [emptyStackName] : Array(stack.frames.reversed())
            let (sum, overflow) = total.addingReportingOverflow(stack.count)
            guard !overflow else { break }
            total = sum
            root.count = sum
            var node = root
            for frame in frames.prefix(Self.maximumDepth) {
                let child = node.children[frame] ?? Node()
                node.children[frame] = child
                child.count += stack.count
                node = child
            }
        }
        guard total > 0 else { return }
        var pending: [(name: String, node: Node, depth: Int, offset: Int64)] = [(Self.rootName, root, 0, 0)]
        while let (name, node, depth, offset) = pending.popLast() {
            boxes.append(Box(name: name, depth: depth, offset: offset, count: node.count))
            var next = offset
            var children: [(String, Node, Int, Int64)] = []
            for (childName, child) in node.children.sorted(by: { $0.key < $1.key }) {
                children.append((childName, child, depth + 1, next))
                next += child.count
            }
            pending += children.reversed()
        }
    }
}
