import Dispatch
import Foundation
import NIOConcurrencyHelpers
import Synchronization

/// The models a server serves now, by name, shared by its REST and gRPC front ends: those given
/// at start and those of its ``ModelRepository``, which clients load and unload while it runs.
/// An unloaded model's requests in flight still finish (they hold it); new ones are refused.
final class ModelRegistry: Sendable {
    /// The repository, if the server has one.
    let repository: ModelRepository?
    private let state: NIOLockedValueBox<State>
    /// Loads run one at a time, off Swift's cooperative pool (compiling a model takes a while).
    private let loads = DispatchQueue(label: "anvil.serve.model-loads")

    private struct State {
        var served: [String: ServedModel]
        /// Why a repository model is not served ("unloaded", or its load error).
        var unavailable: [String: String] = [:]
        /// Told of each model put in service (the metrics).
        var onServe: (@Sendable (ServedModel) -> Void)?
    }

    /// One line of the repository index.
    struct IndexEntry: Sendable, Equatable {
        /// The model's name.
        var name: String
        /// `"READY"` or `"UNAVAILABLE"`.
        var state: String
        /// Why it is unavailable ("" when ready).
        var reason: String
    }

    /// A registry serving `models`; throws for two of one name.
    init(models: [ServedModel], repository: ModelRepository?) throws {
        var served: [String: ServedModel] = [:]
        for model in models {
            guard served[model.name] == nil else { throw ProtocolError.badRequest("two models are named '\(model.name)'; give one another --name") }
            served[model.name] = model
        }
        self.repository = repository
        state = NIOLockedValueBox(State(served: served))
    }

    /// The model served as `name`, if any.
    func model(named name: String) -> ServedModel? { state.withLockedValue { $0.served[name] } }

    /// Whether `name` is served now.
    func serves(_ name: String) -> Bool { model(named: name) != nil }

    /// Every model served now, by name.
    var models: [ServedModel] { state.withLockedValue { $0.served.values.sorted { $0.name < $1.name } } }

    /// The model served as `name`; a ``ProtocolError`` 404 naming those served otherwise.
    func require(_ name: String) throws -> ServedModel {
        let (model, names) = state.withLockedValue { ($0.served[name], $0.served.keys.sorted()) }
        guard let model else {
            throw ProtocolError(.notFound, "unknown model '\(name)'; this server has \(names.isEmpty ? "no model" : names.map { "'\($0)'" }.joined(separator: ", "))")
        }
        return model
    }

    /// Calls `listener` for every model served now and each one put in service later.
    func onServe(_ listener: @escaping @Sendable (ServedModel) -> Void) {
        let current = state.withLockedValue { state in
            state.onServe = listener
            return Array(state.served.values)
        }
        current.forEach(listener)
    }

    /// The repository's models and the models served, each READY or UNAVAILABLE with the reason;
    /// only the ready ones with `readyOnly`.
    func index(readyOnly: Bool = false) -> [IndexEntry] {
        let inRepository = repository?.names() ?? []
        let (served, unavailable) = state.withLockedValue { (Set($0.served.keys), $0.unavailable) }
        return Set(inRepository).union(served).sorted().compactMap { name in
            if served.contains(name) { return IndexEntry(name: name, state: "READY", reason: "") }
            if readyOnly { return nil }
            return IndexEntry(name: name, state: "UNAVAILABLE", reason: unavailable[name] ?? "not loaded")
        }
    }

    /// Loads (or reloads) `name` from the repository and serves it; throws ``ProtocolError``:
    /// 400 without a repository or when it does not load, 404 if the repository lacks it.
    func load(_ name: String) async throws {
        let repository = try requireRepository()
        let result: Result<ServedModel, any Error> = await withCheckedContinuation { continuation in
            loads.async { continuation.resume(returning: Result { try repository.load(name) }) }
        }
        switch result {
        case .success(let model):
            let listener = state.withLockedValue { state in
                state.served[name] = model
                state.unavailable[name] = nil
                return state.onServe
            }
            listener?(model)
        case .failure(let error):
            if repository.file(for: name) != nil {
                state.withLockedValue { $0.unavailable[name] = "\(error)" }
            }
            throw error
        }
    }

    /// Stops serving `name` (requests in flight finish); throws ``ProtocolError`` 400 without a
    /// repository, 404 if it is not served.
    func unload(_ name: String) throws {
        _ = try requireRepository()
        let removed = state.withLockedValue { state -> ServedModel? in
            guard let model = state.served.removeValue(forKey: name) else { return nil }
            state.unavailable[name] = "unloaded"
            return model
        }
        guard removed != nil else { throw ProtocolError(.notFound, "model '\(name)' is not loaded") }
    }

    private func requireRepository() throws -> ModelRepository {
        guard let repository else {
            throw ProtocolError.badRequest("this server has no model repository; start it with --model-repository DIR to load and unload models")
        }
        return repository
    }
}
