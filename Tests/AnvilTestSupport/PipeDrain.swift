import Foundation

/// Reads a pipe to its end on a thread of its own, from the moment it is made: a child that
/// writes more than the pipe's 64 KB to a stream nobody is reading yet (standard error while
/// the parent waits for standard output's end, or for the child's exit) would block forever.
final class PipeDrain: @unchecked Sendable {
    // @unchecked Sendable: `data` is written once on the reading thread before `finished` is
    // signalled, and read only after waiting for that signal.
    private var data = Data()
    private let finished = DispatchSemaphore(value: 0)

    /// Starts reading `pipe` until its writers close it.
    init(_ pipe: Pipe) {
        let handle = pipe.fileHandleForReading
        Thread { [self] in
            data = handle.readDataToEndOfFile()
            finished.signal()
        }.start()
    }

    /// Everything written to the pipe; waits until every writer has closed it.
    func wait() -> Data {
        finished.wait()
        return data
    }
}
