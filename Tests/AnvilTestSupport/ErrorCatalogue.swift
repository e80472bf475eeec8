import Foundation
import Testing

/// `docs/errors.md`, the catalogue of every error's code and message: the engine's and the
/// vision library's catalogue suites check what their errors say against its rows.
enum ErrorCatalogue {
    /// The document's table rows, by id: `| `id` | failure | `type.code` | `message` | test |`.
    static func documentRows(sourceLocation: SourceLocation = #_sourceLocation) -> [String: String] {
        let url = Fixtures.repository.appendingPathComponent("docs/errors.md")
        guard let text = try? String(contentsOf: url, encoding: .utf8), !text.isEmpty else {
            Issue.record("cannot read \(url.path)", sourceLocation: sourceLocation)
            return [:]
        }
        var rows: [String: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let id = line.dropFirst(3).prefix { $0 != "`" }
            rows[String(id)] = String(line)
        }
        return rows
    }

    /// Produces each entry's error (`produce` returns its code, e.g. `AnvilError.invalidOption`,
    /// and its message) and expects the document's row for `id(entry)` to show both. With
    /// `ANVIL_ERROR_CATALOGUE` set, writes the rows as produced to that file.
    static func expectDocumented<Entry>(_ entries: [Entry], id: (Entry) -> String,
                                        produce: (Entry) throws -> (String, String),
                                        sourceLocation: SourceLocation = #_sourceLocation) throws {
        let rows = documentRows(sourceLocation: sourceLocation)
        var generated = ""
        for entry in entries {
            let (code, message) = try produce(entry)
            let id = id(entry)
            generated += "| `\(id)` | | `\(code)` | `\(message)` | |\n"
            guard let row = rows[id] else {
                Issue.record("docs/errors.md has no row for `\(id)`; it is produced as \(code): \(message)",
                             sourceLocation: sourceLocation)
                continue
            }
            #expect(row.contains("`\(code)`"), "`\(id)`: the code is now \(code)", sourceLocation: sourceLocation)
            #expect(row.contains("`\(message)`"), "`\(id)`: the message is now `\(message)`", sourceLocation: sourceLocation)
        }
        if let path = ProcessInfo.processInfo.environment["ANVIL_ERROR_CATALOGUE"] {
            try generated.write(toFile: path, atomically: true, encoding: .utf8)
        }
    }
}
