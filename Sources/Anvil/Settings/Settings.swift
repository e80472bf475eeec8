import Foundation

/// Every setting Anvil takes from the environment, read once per process: the `ANVIL_*`
/// variables, for benchmarks, tests and deployments that cannot change code.
///
/// Values are kept as written; the part of Anvil each one configures parses it and says what is
/// wrong with a value it cannot use (see each property). ``current`` is what Anvil uses; a test
/// can build a value from any dictionary with ``init(environment:)``.
///
/// | variable | property |
/// |---|---|
/// | `ANVIL_ISA` | ``instructionSet`` |
/// | `ANVIL_CONVOLUTION` | ``convolution`` |
/// | `ANVIL_WINOGRAD_FILTERS` | ``winogradFilters`` |
/// | `ANVIL_WINOGRAD_MS_PER_MB` | ``winogradMillisecondsPerMegabyte`` |
/// | `ANVIL_PASS_BUDGET_MB` | ``passBudgetMegabytes`` |
/// | `ANVIL_WORKER_IDLE_MS` | ``workerIdleMilliseconds`` |
/// | `ANVIL_WEIGHT_CACHE` | ``weightCache`` |
public struct Settings: Sendable, Equatable {
    /// `ANVIL_ISA`: the instruction set every kernel runs (`scalar`, `avx2`, `avx512`) instead of
    /// the best the CPU has; see ``InstructionSet/override``. Nil when unset or empty.
    public var instructionSet: String?
    /// `ANVIL_CONVOLUTION`: one algorithm for every convolution that can take it (`im2col`,
    /// `direct`, `gemm`, `winograd2`, `winograd4`); another value makes `compile` throw. Nil when
    /// unset or empty (the cost model chooses).
    public var convolution: String?
    /// `ANVIL_WINOGRAD_FILTERS`: `transformed` or `taps`, the form every Winograd layer keeps its
    /// filters in; nil (or any other value) lets each layer choose.
    public var winogradFilters: String?
    /// `ANVIL_WINOGRAD_MS_PER_MB`: what a megabyte of Winograd filters costs against milliseconds
    /// when the cost model weighs Winograd against the direct kernel (0.2 when unset, negative
    /// or not a number).
    public var winogradMillisecondsPerMegabyte: Double?
    /// `ANVIL_PASS_BUDGET_MB`: the cache budget, in MiB, that decides when a large batch runs its
    /// first layers a few images at a time (0: never); nil (or a negative value) is a quarter of
    /// the last-level cache.
    public var passBudgetMegabytes: Double?
    /// `ANVIL_WORKER_IDLE_MS`: ``Compute/workerIdleMilliseconds``' initial value (30 when unset,
    /// negative or not a number).
    public var workerIdleMilliseconds: Double?
    /// `ANVIL_WEIGHT_CACHE`: the weight cache's folder, or `off`, `0` or `none` for no cache; nil
    /// when unset or empty (see ``WeightCache/standard``).
    public var weightCache: String?
    /// `XDG_CACHE_HOME`, where the weight cache goes by default (its `anvil` folder).
    public var cacheHome: String?
    /// `HOME`, for the weight cache's last default, `~/.cache/anvil`.
    public var home: String?

    /// The settings `environment` holds (a process's environment, or a test's dictionary).
    public init(environment: [String: String]) {
        func text(_ name: String) -> String? {
            guard let value = environment[name], !value.isEmpty else { return nil }
            return value
        }
        func number(_ name: String) -> Double? {
            guard let value = text(name).flatMap(Double.init), value >= 0, value.isFinite else { return nil }
            return value
        }
        instructionSet = text("ANVIL_ISA")
        convolution = text("ANVIL_CONVOLUTION")
        winogradFilters = text("ANVIL_WINOGRAD_FILTERS")
        winogradMillisecondsPerMegabyte = number("ANVIL_WINOGRAD_MS_PER_MB")
        passBudgetMegabytes = number("ANVIL_PASS_BUDGET_MB")
        workerIdleMilliseconds = number("ANVIL_WORKER_IDLE_MS")
        weightCache = text("ANVIL_WEIGHT_CACHE")
        cacheHome = text("XDG_CACHE_HOME")
        home = text("HOME")
    }

    /// The settings of this process, read from its environment the first time anything asks.
    public static let current = Settings(environment: ProcessInfo.processInfo.environment)
}
