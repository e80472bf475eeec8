import Foundation

/// A one-line progress bar drawn on standard error when it is a terminal; silent otherwise.
struct ProgressBar {
    let total: Int
    let width = 40
    private let enabled = isatty(STDERR_FILENO) != 0

    init(total: Int) { self.total = total }

    func update(_ done: Int) {
        guard enabled, total > 0 else { return }
        let filled = width * done / total
        let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled)
        FileHandle.standardError.write("\r\(bar) \(done)/\(total)".data(using: .utf8)!)
        if done >= total { FileHandle.standardError.write("\n".data(using: .utf8)!) }
    }
}
