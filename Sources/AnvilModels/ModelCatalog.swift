import Anvil

/// The networks `anvil` knows by name (for `anvil bench` and `anvil classify`).
public enum ModelCatalog {
    /// Known names, in the order help texts list them.
    public static let names = ["mnist", "forge-mnist"]

    /// The network called `name` (not compiled), or `nil` for an unknown name.
    public static func model(named name: String) throws -> Model? {
        switch name {
        case "mnist": return try MNISTNetwork.deep()
        case "forge-mnist": return try MNISTNetwork.forge()
        default: return nil
        }
    }
}
