import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// The idle workspaces a compiled model keeps between predictions stay bounded whatever batch
/// sizes arrive (a dynamically batching server sends every size up to its maximum), while a
/// size used again is still served from the pool.
@Suite("Workspace pool")
struct WorkspacePoolTests {
    private func compiledMNIST() throws -> (Model, CompiledModel) {
        let input = Input(shape: Shape(height: 28, width: 28, channels: 1))
        let model = try Model(input: input, output: input
            --> Convolution(kernel: (5, 5), channels: 8, activation: .relu, name: "c")
            --> MaxPooling(kernel: (2, 2), stride: (2, 2))
            --> Flatten()
            --> Dense(neurons: 10, name: "d"))
        try model.compile(from: RandomParameterSource())
        guard case .fixed(let compiled) = try model.compilation() else { throw AnvilError(.internalError, "not fixed") }
        return (model, compiled)
    }

    @Test("every batch size from 1 to 24 in turn: idle bytes stay within 4 × the largest workspace")
    func boundedByBytes() throws {
        let (model, compiled) = try compiledMNIST()
        var random = RefRandom(seed: 21)
        var largest = 0
        for round in 0 ..< 3 {
            for batch in 1 ... 24 {
                let input = random.floats(batch * 28 * 28)
                _ = try model.predict(try Tensor(batch: batch, shape: Shape(height: 28, width: 28, channels: 1), values: input))
                let workspace = try CompiledModel.Workspace(model: compiled, batch: batch)
                largest = max(largest, workspace.byteCount)
                let (count, bytes) = compiled.pool.contents
                #expect(count <= WorkspacePool.capacity)
                #expect(bytes <= 4 * largest, "round \(round), batch \(batch): \(count) idle, \(bytes) bytes")
            }
        }
        // Without the byte bound all 24 sizes would be kept: 300 images' worth against the 96 allowed.
        #expect(compiled.pool.contents.count < 24)
    }

    @Test("a size used again comes from the pool: the same workspace, no new one")
    func reuse() throws {
        let (_, compiled) = try compiledMNIST()
        let first = try CompiledModel.Workspace(model: compiled, batch: 3)
        compiled.pool.give(first)
        let again = try #require(compiled.pool.take(batch: 3))
        #expect(again === first)
        #expect(compiled.pool.take(batch: 3) == nil)
    }

    @Test("the oldest idle workspace goes first")
    func evictsOldest() throws {
        let (_, compiled) = try compiledMNIST()
        let pool = WorkspacePool()
        // Equal sizes: 4 × the largest keeps exactly four of them.
        let workspaces = try (0 ..< 6).map { _ in try CompiledModel.Workspace(model: compiled, batch: 2) }
        for workspace in workspaces { pool.give(workspace) }
        #expect(pool.contents.count == 4)
        var kept: [CompiledModel.Workspace] = []
        while let workspace = pool.take(batch: 2) { kept.append(workspace) }
        #expect(Set(kept.map(ObjectIdentifier.init)) == Set(workspaces.suffix(4).map(ObjectIdentifier.init)))
    }
}
