import Foundation

/// The resident size, in kB, of this process's mappings of the file at `path` (from
/// /proc/self/smaps), or nil where that cannot be read.
func residentKilobytes(of path: String) -> Int? {
    // Read to the end: /proc files report a size of 0.
    guard let handle = FileHandle(forReadingAtPath: "/proc/self/smaps"),
          let smaps = String(data: handle.readDataToEndOfFile(), encoding: .utf8) else { return nil }
    defer { try? handle.close() }
    var total = 0, inFile = false, found = false
    for line in smaps.split(separator: "\n") {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        if let first = fields.first, first.contains("-"), first.allSatisfy({ $0.isHexDigit || $0 == "-" }) {
            inFile = fields.count >= 6 && fields[5...].joined(separator: " ") == path
            found = found || inFile
        } else if inFile, fields.first == "Rss:", fields.count >= 2, let kilobytes = Int(fields[1]) {
            total += kilobytes
        }
    }
    return found ? total : nil
}
