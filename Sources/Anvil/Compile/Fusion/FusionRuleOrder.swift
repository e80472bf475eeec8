extension ExecutionPlan {
    /// The fusion rules, in the order they run: at each node, the first rule that folds it into
    /// a later step wins (the first three, each matching a different layer type); at each step
    /// every rule fuses in turn, so what fuses after a step's node comes in this order
    /// (BatchNormalization, residual Add, activation, then a shuffle or a gate).
    static let fusionRules: [any FusionRule.Type] = [
        ChannelSliceFold.self,
        TransposeFlattenFold.self,
        ZeroPadFold.self,
        BatchNormalizationFold.self,
        ResidualAddFusion.self,
        ActivationFusion.self,
        ChannelShuffleFusion.self,
        SqueezeExcitationGateFusion.self,
    ]
}
