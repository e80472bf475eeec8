import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// Weight files that are missing, short, long, empty, unreadable, directories, or changed after
/// loading; blob indexes that are malformed, point past the end, overlap, or hold negative or
/// gigantic sizes. Every case is an `AnvilError` naming the file and tensor, and the model is
/// never half-loaded. (Array-source cases are in ErrorTests.)
@Suite("Failure: parameter files")
struct FailureParameterFileTests {
    // MARK: - One file per tensor

    /// Each broken variant of the directory: the error code and what the message names.
    static let brokenDirectories: [(String, AnvilError.Code, [String], @Sendable (URL) throws -> Void)] = [
        ("missing file", .missingParameter, ["fc_b.bin", "fc_b"], { dir in
            try FileManager.default.removeItem(at: dir.appendingPathComponent("fc_b.bin"))
        }),
        ("short file (one float less)", .invalidParameter, ["conv_W.bin", "212 bytes", "216 bytes"], { dir in
            try Failure.write(Array(Failure.tensors[0].values.dropLast()), to: dir.appendingPathComponent("conv_W.bin"))
        }),
        ("short file (not a whole float)", .invalidParameter, ["conv_b.bin", "11 bytes", "12 bytes"], { dir in
            try Failure.write(bytes: [UInt8](repeating: 0, count: 11), to: dir.appendingPathComponent("conv_b.bin"))
        }),
        ("long file", .invalidParameter, ["fc_W.bin", "388 bytes", "384 bytes"], { dir in
            try Failure.write(Failure.tensors[2].values + [0], to: dir.appendingPathComponent("fc_W.bin"))
        }),
        ("zero-byte file", .invalidParameter, ["fc_W.bin", "has 0 bytes"], { dir in
            try Failure.write(bytes: [], to: dir.appendingPathComponent("fc_W.bin"))
        }),
        ("directory instead of a file", .fileError, ["conv_b.bin", "not a regular file"], { dir in
            try FileManager.default.removeItem(at: dir.appendingPathComponent("conv_b.bin"))
            try FileManager.default.createDirectory(at: dir.appendingPathComponent("conv_b.bin"), withIntermediateDirectories: false)
        }),
        ("dangling symbolic link", .missingParameter, ["fc_b.bin", "missing file"], { dir in
            try FileManager.default.removeItem(at: dir.appendingPathComponent("fc_b.bin"))
            try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("fc_b.bin").path, withDestinationPath: "/nonexistent/fc_b")
        }),
        ("a file no layer uses", .unusedParameter, ["fc2_W"], { dir in
            try Failure.write([1, 2, 3], to: dir.appendingPathComponent("fc2_W.bin"))
        }),
    ]

    @Test("Directory source: missing, short, long, zero-byte, directory-instead-of-file, dangling link, unused file",
          arguments: brokenDirectories.indices)
    func brokenDirectory(_ index: Int) throws {
        let (context, code, mentioning, breakIt) = Self.brokenDirectories[index]
        let dir = try Failure.temporaryDirectory()
        defer { Failure.cleanUp(dir) }
        try Failure.writeDirectory(dir)
        try breakIt(dir)
        let model = try Failure.model()
        for loading in [ParameterLoading.memoryMapped, .copied] {
            Failure.expect(code, mentioning: mentioning, "\(context), \(loading)") {
                try model.compile(from: try DirectoryParameterSource(directory: dir, loading: loading))
            }
            #expect(!model.isCompiled, "\(context): a failed compile must not leave a model compiled")
        }
    }

    @Test("Directory source: a symbolic link to a good file is followed")
    func symbolicLinkFollowed() throws {
        let dir = try Failure.temporaryDirectory()
        defer { Failure.cleanUp(dir) }
        try Failure.writeDirectory(dir)
        let real = dir.appendingPathComponent("elsewhere.dat")
        try FileManager.default.moveItem(at: dir.appendingPathComponent("fc_W.bin"), to: real)
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("fc_W.bin").path, withDestinationPath: real.path)
        let model = try Failure.model()
        // `elsewhere.dat` does not match the `.bin` pattern, so it is not an unused tensor.
        try model.compile(from: try DirectoryParameterSource(directory: dir))
        let expected = try Failure.model()
        try expected.compile(from: Failure.arraySource)
        #expect(try model.predict(Failure.input()) == expected.predict(Failure.input()))
    }

    /// `chmod 000` denies reads only to a process without CAP_DAC_OVERRIDE; tests often run
    /// as root. The check therefore runs in a child process that drops to user `nobody`
    /// (65534) when it is root, so it is exercised either way; it is skipped, with a message,
    /// only when the child can still read the file.
    @Test("Unreadable weight file, blob and model file (chmod 000): fileError 'Permission denied' naming the file")
    func unreadableFiles() async throws {
        let dir = try Failure.temporaryDirectory()
        defer { Failure.cleanUp(dir) }
        try Failure.writeDirectory(dir)
        _ = try Failure.writeBlob(dir.appendingPathComponent("blob.bin"))
        try Failure.model().writeModelFile(to: dir.appendingPathComponent("model.json"))
        let path = dir.path
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) { [path = path as String] in
            Self.readUnreadableFiles(in: path)
        }
        let output = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
        if output.hasPrefix("SKIP") { print("unreadableFiles skipped: \(output)") }
        guard !output.hasPrefix("SKIP") else { return }
        let lines = output.split(separator: "\n").map(String.init)
        for label in ["directory", "blob", "model file"] {
            let line = lines.first { $0.hasPrefix("\(label): ") } ?? "\(label): (no output)"
            #expect(line.hasPrefix("\(label): fileError: ") && line.contains("Permission denied"), "\(line)")
        }
        #expect(lines.first { $0.hasPrefix("directory") }?.contains("fc_W.bin") == true)
        #expect(lines.first { $0.hasPrefix("blob") }?.contains("blob.bin") == true)
        #expect(lines.first { $0.hasPrefix("model file") }?.contains("model.json") == true)
        print(output)
    }

    /// The child process of ``unreadableFiles()``: makes three files unreadable, drops root,
    /// tries to load each and prints one line per file: `<label>: <code>: <message>`.
    static func readUnreadableFiles(in path: String) -> Never {
        let dir = URL(fileURLWithPath: path)
        for name in ["fc_W.bin", "blob.bin", "model.json"] { chmod(dir.appendingPathComponent(name).path, 0) }
        if getuid() == 0 {
            // Root ignores the mode bits: become `nobody`, for whom they apply.
            guard setgid(65534) == 0, setuid(65534) == 0 else {
                print("SKIP: running as root and cannot drop privileges, so chmod 000 does not deny reads")
                exit(0)
            }
        }
        guard access(dir.appendingPathComponent("fc_W.bin").path, R_OK) != 0 else {
            print("SKIP: chmod 000 does not deny reads to this process (CAP_DAC_OVERRIDE?)")
            exit(0)
        }
        func check(_ label: String, _ body: () throws -> Void) {
            do {
                try body()
                print("\(label): no error")
            } catch let error as AnvilError {
                print("\(label): \(error.code): \(error.message)")
            } catch {
                print("\(label): \(type(of: error)): \(error)")
            }
        }
        check("directory") { try Failure.model().compile(from: try DirectoryParameterSource(directory: dir)) }
        check("blob") { _ = try BlobParameterSource(url: dir.appendingPathComponent("blob.bin"), index: [:]) }
        check("model file") { _ = try ModelFile(contentsOf: dir.appendingPathComponent("model.json")) }
        // Always 0: the parent reads the lines (a failed exit expectation hides them).
        exit(0)
    }

    // MARK: - One blob with an index

    /// Index variants: what is wrong, and the words the error must contain.
    static let badIndexes: [(String, [String: BlobParameterSource.Entry], [String])] = {
        let size = 155 * 4  // bytes in the blob
        func with(_ name: String, _ offset: Int, _ count: Int) -> [String: BlobParameterSource.Entry] {
            var index = goodIndex
            index[name] = BlobParameterSource.Entry(offset: offset, count: count)
            return index
        }
        return [
            ("entry past the end", with("fc_b", size - 4, 2), ["fc_b", "lies outside", "\(size) bytes"]),
            ("entry starting past the end", with("fc_b", size + 400, 2), ["fc_b", "lies outside"]),
            ("overlapping entries", with("conv_b", 200, 3), ["overlap", "conv_W", "conv_b"]),
            ("two entries at one offset", with("fc_b", 216, 2), ["overlap", "conv_b", "fc_b"]),
            ("negative offset", with("conv_b", -4, 3), ["conv_b", "offset -4", "lies outside"]),
            ("negative count", with("conv_b", 216, -3), ["conv_b", "-3 floats", "lies outside"]),
            ("offset not a multiple of 4", with("fc_b", 614, 1), ["fc_b", "offset 614", "multiple of 4"]),
            ("count * 4 overflows Int", with("fc_b", 0, Int.max / 2), ["fc_b", "lies outside"]),
            ("offset + count * 4 overflows Int", with("fc_b", Int.max - 3, 2), ["fc_b", "lies outside"]),
            ("gigantic count, Int.max", with("conv_W", 0, Int.max), ["conv_W", "lies outside"]),
            ("offset Int.min", with("conv_W", Int.min, 1), ["conv_W", "lies outside"]),
        ]
    }()

    static let goodIndex: [String: BlobParameterSource.Entry] = [
        "conv_W": .init(offset: 0, count: 54), "conv_b": .init(offset: 216, count: 3),
        "fc_W": .init(offset: 228, count: 96), "fc_b": .init(offset: 612, count: 2),
    ]

    @Test("Blob index: past the end, overlapping, negative, misaligned, overflowing or gigantic entries",
          arguments: badIndexes.indices)
    func badBlobIndex(_ index: Int) throws {
        let (context, entries, mentioning) = Self.badIndexes[index]
        let dir = try Failure.temporaryDirectory()
        defer { Failure.cleanUp(dir) }
        let url = dir.appendingPathComponent("weights.bin")
        #expect(try Failure.writeBlob(url) == Self.goodIndex)
        for loading in [ParameterLoading.memoryMapped, .copied] {
            Failure.expect(.invalidFile, mentioning: mentioning + ["weights.bin"], "\(context), \(loading)") {
                _ = try BlobParameterSource(url: url, index: entries, loading: loading)
            }
        }
    }

    @Test("Blob: an entry of the wrong size for its layer, a missing entry, an unused entry")
    func blobEntryMismatch() throws {
        let dir = try Failure.temporaryDirectory()
        defer { Failure.cleanUp(dir) }
        let url = dir.appendingPathComponent("weights.bin")
        _ = try Failure.writeBlob(url)
        let model = try Failure.model()
        var index = Self.goodIndex
        index["fc_W"] = .init(offset: 228, count: 95)
        Failure.expect(.invalidParameter, mentioning: ["fc_W", "95", "96"]) {
            try model.compile(from: try BlobParameterSource(url: url, index: index))
        }
        index = Self.goodIndex
        index["conv_b"] = nil
        Failure.expect(.missingParameter, mentioning: ["conv_b", "weights.bin"]) {
            try model.compile(from: try BlobParameterSource(url: url, index: index))
        }
        index = Self.goodIndex
        index["conv9_W"] = .init(offset: 0, count: 0)
        Failure.expect(.unusedParameter, mentioning: ["conv9_W"]) {
            try model.compile(from: try BlobParameterSource(url: url, index: index))
        }
        #expect(!model.isCompiled)
        // A count-0 entry anywhere (even past the end) holds nothing and overlaps nothing.
        index = Self.goodIndex
        index["empty_b"] = .init(offset: 620, count: 0)
        #expect(throws: Never.self) { _ = try BlobParameterSource(url: url, index: index) }
    }

    @Test("Blob file: missing, a directory, zero bytes, truncated below the index")
    func blobFile() throws {
        let dir = try Failure.temporaryDirectory()
        defer { Failure.cleanUp(dir) }
        Failure.expect(.fileError, mentioning: ["missing.bin", "No such file or directory"]) {
            _ = try BlobParameterSource(url: dir.appendingPathComponent("missing.bin"), index: Self.goodIndex)
        }
        Failure.expect(.fileError, mentioning: ["not a regular file"]) {
            _ = try BlobParameterSource(url: dir, index: Self.goodIndex)
        }
        let url = dir.appendingPathComponent("weights.bin")
        try Failure.write(bytes: [], to: url)
        Failure.expect(.invalidFile, mentioning: ["lies outside", "(0 bytes)"]) {
            _ = try BlobParameterSource(url: url, index: Self.goodIndex)
        }
        // An empty blob with an empty index is valid (a model without parameters).
        #expect(throws: Never.self) { _ = try BlobParameterSource(url: url, index: [:]) }
        _ = try Failure.writeBlob(url)
        try FileHandle(forWritingTo: url).truncate(atOffset: 600)
        Failure.expect(.invalidFile, mentioning: ["lies outside", "(600 bytes)"]) {
            _ = try BlobParameterSource(url: url, index: Self.goodIndex)
        }
    }

    @Test("MappedFile.floats: out-of-range requests are errors, not reads")
    func mappedFileRanges() throws {
        let dir = try Failure.temporaryDirectory()
        defer { Failure.cleanUp(dir) }
        let url = dir.appendingPathComponent("eight.bin")
        try Failure.write([1, 2, 3, 4, 5, 6, 7, 8], to: url)
        let file = try MappedFile(path: url.path)
        for (offset, count) in [(0, 9), (32, 1), (36, 0), (-4, 1), (4, -1), (0, Int.max), (Int.max, 1), (Int.min, 0), (8, Int.max / 4)] {
            Failure.expect(.invalidFile, mentioning: ["t", "eight.bin"], "offset \(offset), count \(count)") {
                _ = try file.floats(offset: offset, count: count, name: "t")
            }
        }
        Failure.expect(.invalidFile, mentioning: ["multiple of 4"]) { _ = try file.floats(offset: 2, count: 1, name: "t") }
        #expect(Array(try file.floats(offset: 28, count: 1, name: "t").buffer) == [8])
        #expect(try file.floats(offset: 32, count: 0, name: "t").count == 0)
    }

    // MARK: - NaN and infinity in files

    @Test("NaN or infinity in a weight file: invalidParameter with validateParameters, accepted without")
    func nonFiniteInFiles() throws {
        let dir = try Failure.temporaryDirectory()
        defer { Failure.cleanUp(dir) }
        try Failure.writeDirectory(dir)
        var fc = Failure.tensors[2].values
        fc[17] = .infinity
        try Failure.write(fc, to: dir.appendingPathComponent("fc_W.bin"))
        let model = try Failure.model()
        Failure.expect(.invalidParameter, mentioning: ["fc_W", "non-finite", "inf", "index 17"]) {
            try model.compile(validateParameters: true, from: try DirectoryParameterSource(directory: dir))
        }
        #expect(!model.isCompiled)
        // Without validation the values are used as they are: the output shows them.
        try model.compile(from: try DirectoryParameterSource(directory: dir, loading: .copied))
        #expect(try model.predict(Failure.input()).values.contains { !$0.isFinite })

        // A NaN bit pattern in a blob (a quiet NaN with a payload).
        let blob = dir.appendingPathComponent("weights.bin")
        let index = try Failure.writeBlob(blob)
        let handle = try FileHandle(forWritingTo: blob)
        try handle.seek(toOffset: 216 + 4)
        handle.write(Data([0x01, 0x00, 0xC0, 0x7F]))
        try handle.close()
        let fresh = try Failure.model()
        Failure.expect(.invalidParameter, mentioning: ["conv_b", "nan", "index 1"]) {
            try fresh.compile(validateParameters: true, from: try BlobParameterSource(url: blob, index: index))
        }
        #expect(!fresh.isCompiled)
    }

    // MARK: - Files changed after loading

    /// Builds the expected outputs with an array source.
    static func reference() throws -> Tensor {
        let model = try Failure.model()
        try model.compile(from: Failure.arraySource)
        return try model.predict(Failure.input())
    }

    @Test("Loaded with .copied: truncating, emptying or rewriting the files afterwards changes nothing")
    func copiedSurvivesTruncation() throws {
        let dir = try Failure.temporaryDirectory()
        defer { Failure.cleanUp(dir) }
        try Failure.writeDirectory(dir)
        let blob = dir.appendingPathComponent("weights.blob")
        let index = try Failure.writeBlob(blob)
        let expected = try Self.reference()

        let fromDirectory = try Failure.model()
        try fromDirectory.compile(from: try DirectoryParameterSource(directory: dir, loading: .copied))
        let fromBlob = try Failure.model()
        try fromBlob.compile(from: try BlobParameterSource(url: blob, index: index, loading: .copied))
        #expect(try fromDirectory.predict(Failure.input()) == expected)
        #expect(try fromBlob.predict(Failure.input()) == expected)

        // Truncate every file to nothing, then overwrite in place with other values.
        for name in Failure.tensors.map(\.name) {
            try FileHandle(forWritingTo: dir.appendingPathComponent("\(name).bin")).truncate(atOffset: 0)
        }
        try FileHandle(forWritingTo: blob).truncate(atOffset: 0)
        #expect(try fromDirectory.predict(Failure.input()) == expected)
        #expect(try fromBlob.predict(Failure.input()) == expected)
        for (name, values) in Failure.tensors {
            let handle = try FileHandle(forWritingTo: dir.appendingPathComponent("\(name).bin"))
            handle.write(values.map { -$0 * 3 }.withUnsafeBufferPointer { Data(buffer: $0) })
            try handle.close()
        }
        #expect(try fromDirectory.predict(Failure.input()) == expected)
        #expect(try fromBlob.predict(Failure.input()) == expected)
    }

    @Test("Loaded memory-mapped: replacing the files by rename (a new inode) changes nothing")
    func mappedSurvivesAtomicReplace() throws {
        let dir = try Failure.temporaryDirectory()
        defer { Failure.cleanUp(dir) }
        try Failure.writeDirectory(dir)
        let expected = try Self.reference()
        let model = try Failure.model()
        try model.compile(from: try DirectoryParameterSource(directory: dir))
        for (name, values) in Failure.tensors {
            // Data.write(options: .atomic) writes a temporary file and renames it over the old one.
            try values.map { $0 + 1 }.withUnsafeBufferPointer { Data(buffer: $0) }
                .write(to: dir.appendingPathComponent("\(name).bin"), options: .atomic)
        }
        #expect(try model.predict(Failure.input()) == expected)
    }

    /// Documents the hazard `.copied` exists for: a mapped file truncated under a compiled
    /// model. The kernels read weights straight from the mapping (Forge layout needs no
    /// copy; a lone image goes through the dense layer's in-place weights, where batches of 2
    /// or more of so small a layer read its packed copy), and reading a page past the new end
    /// of file raises SIGBUS. Run in a child
    /// process; under AddressSanitizer the signal is reported by ASan as a failure exit instead.
    @Test("Loaded memory-mapped: truncating a weight file afterwards kills predict with SIGBUS")
    func mappedTruncationIsSIGBUS() async throws {
        let dir = try Failure.temporaryDirectory()
        defer { Failure.cleanUp(dir) }
        try Failure.writeDirectory(dir)
        let path = dir.path
        let sanitized = Failure.underSanitizer
        let result = await #expect(processExitsWith: .failure) { [path = path as String] in
            let dir = URL(fileURLWithPath: path)
            let model = try Failure.model()
            try model.compile(from: try DirectoryParameterSource(directory: dir))  // memory-mapped
            let image = try Tensor(batch: 1, shape: Shape(height: 4, width: 4, channels: 2),
                                   values: (0 ..< 32).map { Float($0 % 7) / 7 - 0.4 })
            _ = try model.predict(image)
            // Every file: whichever the kernels borrow (rather than copy) faults.
            for name in ["conv_W", "conv_b", "fc_W", "fc_b"] {
                try FileHandle(forWritingTo: dir.appendingPathComponent("\(name).bin")).truncate(atOffset: 0)
            }
            _ = try model.predict(image)
            exit(0)  // not reached on Linux: the read above faults
        }
        if !sanitized { #expect(result?.exitStatus == .signal(SIGBUS)) }
    }
}
