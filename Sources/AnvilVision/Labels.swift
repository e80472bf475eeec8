import Foundation

/// Class names for a classifier's outputs: `labels[i]` names output `i`.
///
/// ```swift
/// let labels = try Labels(contentsOf: URL(fileURLWithPath: "Weights/imagenet/classes.txt"), expectedCount: 1000)
/// for p in try probabilities.top(k: 5, labels: labels) {
///     print(p.label, p.probability)
/// }
/// ```
///
/// A label file is UTF-8 text with one label per line, in output order: line 1 names output 0.
/// Each line is trimmed of surrounding spaces and tabs; a final newline is optional, `\r\n`
/// line ends are accepted and a leading byte-order mark is skipped. An empty line is an error
/// (it would shift every following label), except after the last label.
public struct Labels: Sendable, Hashable, RandomAccessCollection {
    /// The names, in output order.
    public let names: [String]

    /// Labels from names in output order.
    public init(_ names: [String]) {
        self.names = names
    }

    /// `count` placeholder labels `"class 0"`, `"class 1"`, ..., for a classifier without names.
    public static func numbered(_ count: Int) -> Labels {
        Labels((0 ..< Swift.max(count, 0)).map { "class \($0)" })
    }

    /// Reads a label file (see the type's description).
    ///
    /// - Parameter expectedCount: if given, the number of labels the file must hold (e.g. 1000
    ///   for ImageNet, or the model's output count).
    /// - Throws: ``VisionError`` naming the path: `.cannotRead` (missing or unreadable file),
    ///   `.emptyFile`, `.invalidLabelFile` (a blank line, not UTF-8), `.countMismatch` (a count
    ///   other than `expectedCount`).
    public init(contentsOf url: URL, expectedCount: Int? = nil) throws {
        let data = try FileReading.data(of: url)
        guard let text = String(data: data, encoding: .utf8) else {
            throw VisionError(.invalidLabelFile, source: url.path, message: "label file is not UTF-8 text")
        }
        try self.init(text: text, source: url.path, expectedCount: expectedCount)
    }

    /// Parses the text of a label file; `source` names it in errors.
    ///
    /// - Throws: as ``init(contentsOf:expectedCount:)``.
    public init(text: String, source: String = "labels", expectedCount: Int? = nil) throws {
        var body = Substring(text)
        if body.hasPrefix("\u{FEFF}") { body = body.dropFirst() }
        guard !body.isEmpty else { throw VisionError(.emptyFile, source: source, message: "label file is empty") }
        // "\r\n" is one Character in Swift, so both line ends are named.
        var lines = body.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        if lines.last?.isEmpty == true { lines.removeLast() }  // the final newline
        var names: [String] = []
        names.reserveCapacity(lines.count)
        for (number, line) in lines.enumerated() {
            let name = line.trimmingCharacters(in: CharacterSet(charactersIn: " \t\r"))
            guard !name.isEmpty else {
                throw VisionError(.invalidLabelFile, source: source,
                                  message: "line \(number + 1) is blank; a label file has one label on every line")
            }
            names.append(name)
        }
        if let expectedCount, names.count != expectedCount {
            throw VisionError(.countMismatch, source: source,
                              message: "label file has \(names.count) labels, expected \(expectedCount)")
        }
        self.init(names)
    }

    /// The number of labels.
    public var count: Int { names.count }
    /// 0.
    public var startIndex: Int { 0 }
    /// ``count``.
    public var endIndex: Int { names.count }
    /// The label of output `index`.
    public subscript(index: Int) -> String { names[index] }
}
