import Foundation

/// `anvil bench --paced`: predictions run when standard input asks for them, so a script can
/// alternate this process with other engines or builds one run at a time.
enum PacedRuns {
    /// The most runs one request may ask for.
    static let maximumRuns = 100_000

    /// Prints `ready`, then answers each line of standard input — a count N of runs — with
    /// `runs_ms:` and the N times of `run` in milliseconds (a line that is not such a count gets
    /// an `error:` line and nothing runs). Returns every time, in order, at the end of input.
    /// Each answer is flushed at once: the caller waits for it before timing anything else.
    static func serve(_ run: () throws -> Duration) throws -> [Double] {
        say("ready")
        var times: [Double] = []
        while let line = readLine() {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.isEmpty { continue }
            guard let count = Int(text), (1 ... maximumRuns).contains(count) else {
                say("error: expected a number of runs from 1 to \(maximumRuns), got '\(text.prefix(40))'")
                continue
            }
            var answer: [Double] = []
            answer.reserveCapacity(count)
            for _ in 0 ..< count { answer.append(milliseconds(try run())) }
            times += answer
            say("runs_ms: " + answer.map { String(format: "%.4f", $0) }.joined(separator: " "))
        }
        return times
    }

    /// One line on standard output, flushed (a pipe's output is otherwise held in a buffer).
    private static func say(_ line: String) {
        print(line)
        fflush(nil)  // every stream: naming `stdout` is a shared global to Swift 6
    }
}
