/// Counts of (true class, predicted class) pairs, printed as a table.
struct ConfusionMatrix {
    let classes: Int
    private(set) var counts: [[Int]]

    init(classes: Int) {
        self.classes = classes
        counts = Array(repeating: Array(repeating: 0, count: classes), count: classes)
    }

    mutating func add(truth: Int, predicted: Int) { counts[truth][predicted] += 1 }

    var correct: Int { (0 ..< classes).reduce(0) { $0 + counts[$1][$1] } }
    var total: Int { counts.joined().reduce(0, +) }

    /// Rows are true classes, columns predictions.
    func table() -> String {
        let cell = max(5, String(counts.joined().max() ?? 0).count + 1)
        func pad(_ text: String) -> String { String(repeating: " ", count: max(0, cell - text.count)) + text }
        var lines = ["confusion matrix (rows: true digit, columns: predicted)"]
        lines.append("     " + (0 ..< classes).map { pad(String($0)) }.joined())
        for truth in 0 ..< classes {
            lines.append(pad(String(truth)) + (0 ..< classes).map { pad(String(counts[truth][$0])) }.joined())
        }
        return lines.joined(separator: "\n")
    }
}
