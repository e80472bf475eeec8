import Foundation
import Testing
@testable import AnvilVision

@Suite("Labels and top-k")
struct LabelsTests {
    func write(_ text: String) throws -> (URL, URL) {
        let directory = try makeTemporaryDirectory()
        let url = directory.appendingPathComponent("labels.txt")
        try Data(text.utf8).write(to: url)
        return (directory, url)
    }

    @Test func readsOneLabelPerLine() throws {
        let (directory, url) = try write("cat\ndog\nhot dog, red hot\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        let labels = try Labels(contentsOf: url, expectedCount: 3)
        #expect(labels.names == ["cat", "dog", "hot dog, red hot"])
        #expect(labels.count == 3 && labels[2] == "hot dog, red hot")
    }

    @Test func toleratesCRLFAByteOrderMarkSpacesAndNoFinalNewline() throws {
        let labels = try Labels(text: "\u{FEFF}  tench \r\ngoldfish\r\n\tshark", expectedCount: 3)
        #expect(labels.names == ["tench", "goldfish", "shark"])
    }

    @Test func errors() throws {
        let (directory, url) = try write("a\nb\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        let wrong = expectVisionError(.countMismatch) { try Labels(contentsOf: url, expectedCount: 1000) }
        #expect(wrong?.description == "\(url.path): label file has 2 labels, expected 1000")
        let missing = directory.appendingPathComponent("none.txt")
        let e = expectVisionError(.cannotRead) { try Labels(contentsOf: missing) }
        #expect(e?.source == missing.path)
        expectVisionError(.cannotRead) { try Labels(contentsOf: directory) }
        let blank = expectVisionError(.invalidLabelFile) { try Labels(text: "a\n\nb\n", source: "x.txt") }
        #expect(blank?.message.contains("line 2") == true)
        expectVisionError(.emptyFile) { try Labels(text: "", source: "empty.txt") }
        let binary = directory.appendingPathComponent("binary.txt")
        try Data([0x61, 0xFF, 0xFE, 0x0A]).write(to: binary)
        expectVisionError(.invalidLabelFile) { try Labels(contentsOf: binary) }
    }

    @Test func numberedLabels() {
        #expect(Labels.numbered(3).names == ["class 0", "class 1", "class 2"])
    }

    @Test func topIsSortedDescendingWithTiesByIndex() throws {
        let labels = Labels(["a", "b", "c", "d", "e", "f"])
        let scores: [Float] = [0.1, 0.3, 0.1, 0.3, 0.05, 0.15]
        let top = try scores.top(k: 4, labels: labels)
        #expect(top.map(\.index) == [1, 3, 5, 0])
        #expect(top.map(\.label) == ["b", "d", "f", "a"])
        #expect(top.map(\.probability) == [0.3, 0.3, 0.15, 0.1])
        // The full sort path (k > 16) gives the same order.
        let many = (0 ..< 40).map { Float($0 % 5) }
        let all = try many.top(k: 40)
        #expect(all.prefix(4).map(\.index) == [4, 9, 14, 19])
        #expect(try many.top(k: 8).map(\.index) == all.prefix(8).map(\.index))
        #expect(all.last?.index == 35 && all.first?.label == "class 4")
    }

    @Test func kLargerThanTheScoresAndZero() throws {
        let scores: [Float] = [0.2, 0.8]
        #expect(try scores.top(k: 5).map(\.index) == [1, 0])
        #expect(try scores.top(k: 0).isEmpty)
        #expect(try [Float]().top(k: 3).isEmpty)
        expectVisionError(.invalidArgument) { try scores.top(k: -1) }
    }

    @Test func nanRanksLast() throws {
        let scores: [Float] = [.nan, 0.5, .nan, 0.7]
        #expect(try scores.top(k: 4).map(\.index) == [3, 1, 0, 2])
    }

    @Test func softmaxIsExplicitForLogits() throws {
        let logits: [Float] = [1, 2, 3, 0]
        let asGiven = try logits.top(k: 2)
        #expect(asGiven.map(\.probability) == [3, 2])
        let top = try logits.top(k: 4, scores: .logits)
        let e = [1.0, 2, 3, 0].map { Foundation.exp($0) }, sum = e.reduce(0, +)
        #expect(top.map(\.index) == [2, 1, 0, 3])
        for p in top { #expect(abs(Double(p.probability) - e[p.index] / sum) < 1e-7) }
        // Large logits do not overflow.
        let big = try [Float](arrayLiteral: 1000, 999).top(k: 1, scores: .logits)
        #expect(abs(big[0].probability - Float(1 / (1 + Foundation.exp(-1.0)))) < 1e-6)
        // An ArraySlice of a batch works too.
        let batch: [Float] = [0, 1, 5, 4]
        #expect(try batch[2...].top(k: 1, labels: Labels(["x", "y"]))[0].label == "x")
    }

    @Test func labelsMustMatchTheScores() {
        let e = expectVisionError(.countMismatch) { try [Float](repeating: 0, count: 10).top(k: 5, labels: Labels(["a"])) }
        #expect(e?.message == "10 scores but 1 labels; they must match one to one")
    }

    @Test func predictionDescription() {
        #expect(Prediction(index: 281, label: "tabby", probability: 0.632_14).description == "tabby (281): 63.21%")
    }
}
